"""Properties that must hold for any input: bounds, idempotence, capped counting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tideline.memory import WeightedNarrative, compute_weight, count_tag_sharers, deflate_recent

dimension = st.integers(min_value=1, max_value=5)


@given(dimension, dimension, dimension, dimension)
def test_weight_is_within_bounds_and_monotone(imp: int, emo: int, rec: int, unr: int) -> None:
    w = compute_weight(imp, emo, rec, unr)
    assert 0.0 <= w <= 1.0
    if imp < 5:
        assert compute_weight(imp + 1, emo, rec, unr) > w


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=80),
    st.integers(min_value=1, max_value=60),
    st.floats(min_value=0.3, max_value=1.0),
)
@example([8.111390619505175e-07, 1.0], 60, 0.48657481575100525)  # rounding lifted 8e-7 to 1e-6
def test_deflation_is_idempotent(weights: list[float], window: int, ceiling: float) -> None:
    base = datetime(2025, 1, 1, tzinfo=UTC)
    items = [
        WeightedNarrative(i, base + timedelta(minutes=i), 3, 3, 3, 3, w)
        for i, w in enumerate(weights)
    ]
    changed = deflate_recent(items, window=window, ceiling=ceiling)
    after = [
        WeightedNarrative(n.id, n.created_at, 3, 3, 3, 3, changed.get(n.id, n.weight))
        for n in items
    ]
    assert deflate_recent(after, window=window, ceiling=ceiling) == {}
    assert all(0.0 <= w <= 1.0 for w in changed.values())
    assert all(w < items[i].weight for i, w in changed.items())


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.integers(0, 200), st.lists(st.sampled_from("abcdefghij"), max_size=3), max_size=60
    ),
    st.integers(0, 12),
)
def test_capped_sharer_count(tags: dict[int, list[str]], cap: int) -> None:
    full = count_tag_sharers(tags)
    assert count_tag_sharers(tags, cap=cap) == {k: min(v, cap) for k, v in full.items()}
    for nid, own in tags.items():
        expected = sum(1 for other, t in tags.items() if other != nid and set(t) & set(own))
        assert full[nid] == expected
