"""Track B of the scanner: turns after the latest narrative, grouped by time proximity."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tideline.analysis import Turn, chunk_turns, chunks_to_json, chunks_to_markdown


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2025, 3, 1, hour, minute, tzinfo=UTC)


TURNS = [
    Turn(5, at(13, 10), "and after lunch", "user"),
    Turn(1, at(9, 0), "already solidified", "user"),
    Turn(2, at(10, 0), "hello", "user"),
    Turn(3, at(10, 5), "hi! what's up?", "agent"),
    Turn(4, at(10, 35), "a gap of exactly 30 minutes\nstays in the chunk", "user"),
    Turn(6, at(13, 0), "back again", "user"),
]


def test_chunks_split_on_gaps_after_cutoff() -> None:
    chunks = chunk_turns(TURNS, after=at(9, 30))
    assert [[t.id for t in c.turns] for c in chunks] == [[2, 3, 4], [6, 5]]
    assert chunks[0].start == at(10) and chunks[0].end == at(10, 35)
    assert [c.index for c in chunks] == [0, 1]


def test_gap_is_configurable_and_cutoff_is_strict() -> None:
    assert len(chunk_turns(TURNS, max_gap=timedelta(minutes=29))) == 4
    assert len(chunk_turns(TURNS, max_gap=timedelta(hours=5))) == 1
    assert [t.id for c in chunk_turns(TURNS, after=at(13)) for t in c.turns] == [5]
    with pytest.raises(ValueError, match="negative"):
        chunk_turns(TURNS, max_gap=timedelta(minutes=-1))


def test_markdown_names_every_turn_id() -> None:
    text = chunks_to_markdown(chunk_turns(TURNS, after=at(9, 30)), max_chars=20)
    assert "2 chunks, 5 turns" in text
    assert "## Chunk 1: 2025-03-01 10:00+00:00 → 2025-03-01 10:35+00:00 (3 turns, 35 min)" in text
    assert "- `4` 10:35 **user**: a gap of exactly 30…" in text
    for turn_id in (2, 3, 4, 5, 6):
        assert f"`{turn_id}`" in text
    assert "`1`" not in text


def test_json_round_trips() -> None:
    data = chunks_to_json(chunk_turns(TURNS, after=at(9, 30)))
    assert json.loads(json.dumps(data)) == data
    assert data[1]["turn_ids"] == [6, 5]
    assert data[0]["turns"][1] == {
        "id": 3,
        "timestamp": "2025-03-01T10:05:00+00:00",
        "speaker": "agent",
        "text": "hi! what's up?",
    }


def test_nothing_new() -> None:
    assert chunk_turns([]) == []
    assert chunk_turns(TURNS, after=at(23)) == []
    assert "0 chunks, 0 turns" in chunks_to_markdown([])
    assert chunks_to_json([]) == []


def test_markdown_lists_narratives_without_source_links() -> None:
    text = chunks_to_markdown([], unlinked=[17, 23])
    assert "## Narratives without source links (2)" in text
    assert "`17`, `23`" in text
