from __future__ import annotations

import pytest

from tideline.errors import InvalidInput, NotFound
from tideline.memory import Memory, compute_weight

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def test_weight_formula_and_recurrence_at_write_time(memory: Memory) -> None:
    first = memory.write(
        gesture="Debugged the parser", importance=4, emotional=2, unresolved=3, tags=["debug"]
    )
    assert first.recurrence == 1  # no other narrative shares a tag
    assert first.weight == pytest.approx((0.35 * 4 + 0.25 * 2 + 0.25 * 1 + 0.15 * 3 - 1) / 4)
    second = memory.write(gesture="Debugged the lexer", tags=["Debug ", "lexer"])
    assert second.tags == ["debug", "lexer"] and second.recurrence == 2  # one other shares "debug"
    for i in range(3):
        memory.write(gesture=f"more debugging {i}", tags=["debug"])
    fifth = memory.write(gesture="and again", tags=["debug"])
    assert fifth.recurrence == 4  # 5 others: band 4–7 → 4


def test_dream_importance_is_forced_to_one(memory: Memory) -> None:
    d = memory.write(
        gesture="I dreamt of a tide made of letters", kind="dream", importance=5, emotional=4
    )
    assert d.importance == 1 and d.weight == compute_weight(1, 4, 1, 1)


def test_source_links_must_exist_and_nothing_is_written(memory: Memory) -> None:
    t = memory.sync_turn("s", "user", "hello")
    with pytest.raises(NotFound, match="turn 4242 does not exist"):
        memory.write(gesture="linked badly", source_links=[t.id, 4242])
    assert memory.stats()["narratives"] == 0
    assert memory.db.scalar("SELECT count(*) FROM narrative_links") == 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"gesture": ""}, "gesture is empty"),
        ({"gesture": "x" * 501}, "limit is 500"),
        ({"gesture": "ok", "importance": 6}, "out of range"),
        ({"gesture": "ok", "emotional": 0}, "out of range"),
        ({"gesture": "ok", "unresolved": "high"}, "must be an integer"),
        ({"gesture": "ok", "kind": "rumour"}, "unknown"),
        ({"gesture": "ok", "mood": "sad"}, r"unknown field\(s\) \['mood'\]"),
        ({"gesture": "ok", "entities_role": "A judge; B=review"}, "no '='"),
        ({"gesture": "ok", "entities_role": "=review"}, "empty entity"),
        ({"gesture": "ok", "context": "y" * 8001}, "limit is 8,000"),
        ({"gesture": "ok", "tags": ["t"] * 33}, "limit is 32"),
        ({"gesture": "ok", "source_links": ["7"]}, "list of turn ids"),
    ],
)
def test_invalid_narratives_are_refused(memory: Memory, fields: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.write(**fields)
    assert memory.stats()["narratives"] == 0


def test_entities_role_forms_are_accepted(memory: Memory) -> None:
    n = memory.write(gesture="Reviewed the design", entities_role="A=判断+执行; B=审查")
    assert n.entities_role == "A=判断+执行; B=审查"
    memory.write(gesture="Full-width separators", entities_role="照照＝审查＋架构；甜心＝设计")


def test_anti_inflation_caps_the_recent_mean(memory: Memory) -> None:
    for i in range(12):
        memory.write(
            gesture=f"huge event {i}",
            importance=5,
            emotional=5,
            unresolved=5,
            tags=["big"],
            created_at=f"2026-11-{i + 1:02d}T00:00:00Z",
        )
    weights = [r[0] for r in memory.db.execute("SELECT weight FROM narratives")]
    mean = sum(weights) / len(weights)
    assert mean == pytest.approx(0.7, abs=1e-4)  # raw weights would average > 0.9
    before = weights
    assert memory.narratives.deflate() == {}  # idempotent: a second pass changes nothing
    assert [r[0] for r in memory.db.execute("SELECT weight FROM narratives")] == before


def test_low_weights_are_left_alone(memory: Memory) -> None:
    n = memory.write(gesture="a quiet day", importance=1, emotional=1)
    assert n.weight == 0.0 and memory.narratives.deflate() == {}


def test_one_tag_rule_for_writes_and_filters(memory: Memory) -> None:
    n = memory.write(gesture="Read a paper on attention", tags=["Machine  Learning"])
    memory.write(gesture="Read a paper on tides", tags=["oceans"])
    assert n.tags == ["machine learning"]
    for wanted in (["Machine  Learning"], [" machine learning"], ["MACHINE\tLEARNING "]):
        assert [h.id for h in memory.search("paper", tags=wanted).hits] == [n.id]
