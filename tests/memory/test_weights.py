"""The weight formula, recurrence refresh and the anti-inflation rule."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from tideline.errors import InvalidInput
from tideline.memory import (
    WeightedNarrative,
    compute_weight,
    count_tag_sharers,
    deflate_recent,
    raw_weight,
    recompute_weights,
    recurrence_from_count,
    refresh_recurrence,
)


def test_weight_formula() -> None:
    assert compute_weight(1, 1, 1, 1) == 0.0
    assert compute_weight(5, 5, 5, 5) == 1.0
    assert compute_weight(3, 3, 3, 3) == 0.5
    assert raw_weight(5, 1, 1, 1) == pytest.approx(2.4)
    assert compute_weight(5, 1, 1, 1) == pytest.approx(0.35)
    assert compute_weight(1, 5, 1, 1) == pytest.approx(0.25)
    assert compute_weight(1, 1, 1, 5) == pytest.approx(0.15)
    assert compute_weight(np.int64(3), 3, 3, 3) == 0.5


@pytest.mark.parametrize("bad", [0, 6, 2.5, True, "3"])
def test_dimensions_are_integers_one_to_five(bad: object) -> None:
    with pytest.raises(InvalidInput, match="importance"):
        compute_weight(bad, 3, 3, 3)  # type: ignore[arg-type]


def test_recurrence_mapping() -> None:
    expected = {0: 1, 1: 2, 2: 3, 3: 3, 4: 4, 7: 4, 8: 5, 1000: 5}
    assert {n: recurrence_from_count(n) for n in expected} == expected
    with pytest.raises(ValueError):
        recurrence_from_count(-1)


def test_count_tag_sharers() -> None:
    tags = {
        1: ["debug", "甜心"],
        2: ["Debug "],  # same tag, other case and spacing
        3: ["甜心", "night"],
        4: ["night"],
        5: [],
        6: ["alone"],
    }
    assert count_tag_sharers(tags) == {1: 2, 2: 1, 3: 2, 4: 1, 5: 0, 6: 0}
    assert refresh_recurrence(tags) == {1: 3, 2: 2, 3: 3, 4: 2, 5: 1, 6: 1}


def test_capped_count_equals_min_of_true_count() -> None:
    rng = random.Random(7)
    vocab = [f"t{i}" for i in range(40)]
    tags = {i: rng.sample(vocab, rng.randint(0, 3)) for i in range(300)}
    full = count_tag_sharers(tags)
    capped = count_tag_sharers(tags, cap=8)
    assert capped == {k: min(v, 8) for k, v in full.items()}


def test_all_same_tag_saturates_quickly() -> None:
    tags = {i: ["same"] for i in range(20_000)}
    assert set(refresh_recurrence(tags).values()) == {5}


def narrative(i: int, weight: float, **dims: int) -> WeightedNarrative:
    base = datetime(2025, 1, 1, tzinfo=UTC)
    values = {"importance": 3, "emotional": 3, "recurrence": 3, "unresolved": 3} | dims
    return WeightedNarrative(id=i, created_at=base + timedelta(hours=i), weight=weight, **values)


def test_recompute_weights_uses_refreshed_recurrence() -> None:
    items = [narrative(1, 0.0), narrative(2, 0.0)]
    assert recompute_weights(items) == {1: 0.5, 2: 0.5}
    assert recompute_weights(items, {1: 5}) == {1: 0.625, 2: 0.5}


def test_deflation_rescales_only_the_recent_window_and_is_idempotent() -> None:
    items = [narrative(i, 0.2) for i in range(10)] + [narrative(i, 0.9) for i in range(10, 60)]
    items[-1] = narrative(59, 0.5)  # recent mean = (49·0.9 + 0.5) / 50 = 0.892
    changed = deflate_recent(items, window=50, ceiling=0.7)
    assert set(changed) == set(range(10, 60))
    assert sum(changed.values()) / 50 == pytest.approx(0.7, abs=1e-5)
    assert changed[59] < changed[10]  # order is preserved
    after = [
        WeightedNarrative(n.id, n.created_at, 3, 3, 3, 3, changed.get(n.id, n.weight))
        for n in items
    ]
    assert deflate_recent(after, window=50, ceiling=0.7) == {}


def test_no_deflation_below_ceiling_or_empty() -> None:
    items = [narrative(i, 0.7) for i in range(60)]
    assert deflate_recent(items) == {}
    assert deflate_recent([]) == {}
    with pytest.raises(ValueError, match="window"):
        deflate_recent(items, window=0)


def test_deflation_picks_newest_by_created_at() -> None:
    old_but_heavy = [narrative(i, 1.0) for i in range(3)]
    recent_light = [narrative(i, 0.1) for i in range(3, 6)]
    shuffled = [recent_light[1], old_but_heavy[0], recent_light[0], *old_but_heavy[1:]]
    shuffled.append(recent_light[2])
    assert deflate_recent(shuffled, window=3) == {}
    assert set(deflate_recent(shuffled, window=6, ceiling=0.5)) == set(range(6))


def test_deflation_with_overriding_weights() -> None:
    items = [narrative(i, 0.1) for i in range(4)]
    new = deflate_recent(items, window=4, weights=dict.fromkeys(range(4), 0.8))
    assert new == dict.fromkeys(range(4), 0.7)


def test_tags_must_be_a_list_not_a_string() -> None:
    with pytest.raises(TypeError, match="parse the stored JSON"):
        count_tag_sharers({1: '["a", "b"]'})  # type: ignore[dict-item]
