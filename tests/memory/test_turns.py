from __future__ import annotations

import pytest

from tideline.errors import InvalidInput, NotFound
from tideline.memory import Memory

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def test_sync_turn_twice_stores_once(memory: Memory) -> None:
    a = memory.sync_turn("chat-1", "user", "I moved to Lisbon", timestamp="2026-11-01T09:00:00Z")
    b = memory.sync_turn("chat-1", "user", "I moved to Lisbon", timestamp="2026-11-01T09:00:00Z")
    assert a.created and not b.created and a.id == b.id
    later = memory.sync_turn(
        "chat-1", "user", "I moved to Lisbon", timestamp="2026-11-02T09:00:00Z"
    )
    assert later.created and later.id != a.id  # the same words said again later are a new turn
    assert memory.stats()["turns"] == 2 and memory.stats()["turn_vectors"] == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"session": "", "role": "user", "text": "x"}, "session is empty"),
        ({"session": "s", "role": "robot overlord!", "text": "x"}, "not a role name"),
        ({"session": "s", "role": "user", "text": "   "}, "turn text is empty"),
        ({"session": "s", "role": "user", "text": "x" * 100_001}, "limit is 100,000"),
        (
            {"session": "s", "role": "user", "text": "x", "timestamp": "yesterday"},
            "not an ISO 8601",
        ),
    ],
)
def test_bad_turns_are_refused_and_nothing_is_written(
    memory: Memory, kwargs: dict, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        memory.sync_turn(**kwargs)
    assert memory.stats()["turns"] == 0 and memory.stats()["sessions"] == 0


def test_trace_returns_source_turns_with_neighbours(memory: Memory) -> None:
    ids = [
        memory.sync_turn("s", "user" if i % 2 == 0 else "assistant", f"message number {i}").id
        for i in range(10)
    ]
    n = memory.write(gesture="We counted to ten together", source_links=[ids[2], ids[3], ids[8]])
    trace = memory.trace(n.id, window=1)
    assert [[t.turn.id for t in w] for w in trace.windows] == [ids[1:5], ids[7:10]]
    assert [t.turn.id for w in trace.windows for t in w if t.source] == [ids[2], ids[3], ids[8]]
    with pytest.raises(NotFound, match="narrative 999 does not exist"):
        memory.trace(999)


def test_recent_turns_of_latest_session(memory: Memory) -> None:
    memory.sync_turn("old", "user", "old talk", timestamp="2026-01-01T00:00:00Z")
    for i in range(4):
        memory.sync_turn("new", "user", f"new talk {i}", timestamp=f"2026-02-01T00:0{i}:00Z")
    assert [t.text for t in memory.raw.recent(2)] == ["new talk 2", "new talk 3"]
