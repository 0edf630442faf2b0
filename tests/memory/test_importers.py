from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import shared_data
from tideline.errors import InvalidInput, NotFound
from tideline.memory import Memory

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def test_openai_chat_json_and_jsonl(memory: Memory, tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": "Plan a trip to Kyoto"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Day 1: Fushimi Inari"},
                        {"type": "image_url", "image_url": {"url": "x"}},
                    ],
                },
                {"role": "assistant", "content": ""},
            ]
        )
    )
    s = memory.import_file(chat, "openai")
    assert (s.sessions, s.turns_added, s.skipped, s.problems) == (1, 3, 1, [])
    again = memory.import_file(chat, "openai")
    assert (again.turns_added, again.turns_existing) == (0, 3)
    lines = tmp_path / "chat.jsonl"
    lines.write_text(
        '{"role": "user", "content": "hi"}\n{broken\n{"role": "assistant", "content": "hello"}\n'
    )
    s = memory.import_file(lines, "openai")
    assert s.turns_added == 2 and [p.line for p in s.problems] == [2]


def test_transcript_skips_unknown_types_and_reports_broken_lines(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "t.jsonl"
    rows = [
        {"type": "summary", "summary": "a summary line"},
        {
            "type": "user",
            "sessionId": "abc",
            "timestamp": "2026-11-01T10:00:00Z",
            "uuid": "u1",
            "message": {"role": "user", "content": "Refactor the importer please"},
        },
        {
            "type": "assistant",
            "sessionId": "abc",
            "timestamp": "2026-11-01T10:00:05Z",
            "uuid": "u2",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Done."},
                    {"type": "tool_use", "name": "edit"},
                ],
            },
        },
        {
            "type": "user",
            "sessionId": "abc",
            "uuid": "u3",
            "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]},
        },
        {"role": "user", "content": "plain shape", "timestamp": "2026-11-01T10:01:00Z"},
    ]
    text = (
        "\n".join(json.dumps(r) for r in rows[:3])
        + "\nnot json at all\n"
        + "\n".join(json.dumps(r) for r in rows[3:])
    )
    path.write_text(text + "\n")
    s = memory.import_file(path, "transcript")
    assert s.turns_added == 3 and s.skipped == 2
    assert [(p.line, "not valid JSON" in p.message) for p in s.problems] == [(4, True)]
    keys = {r["key"] for r in memory.sessions()}
    assert keys == {"transcript/abc", "transcript/t"}
    assert memory.import_file(path, "transcript").turns_added == 0


def test_locomo_slice(memory: Memory, tmp_path: Path) -> None:
    full = json.loads(shared_data("locomo", "conv-26.json").read_text())
    keep = (
        "speaker_a",
        "speaker_b",
        "session_1",
        "session_1_date_time",
        "session_2",
        "session_2_date_time",
    )
    data = {k: full[k] for k in keep}  # a two-session slice keeps the test fast
    path = tmp_path / "conv-26-slice.json"
    path.write_text(json.dumps(data))
    s = memory.import_file(path, "locomo")
    expected = len(data["session_1"]) + len(data["session_2"])
    assert s.turns_added == expected and s.sessions == 2 and not s.problems
    first = memory.db.one(
        "SELECT t.text, t.speaker, t.ts, t.external_id, t.role FROM turns t ORDER BY id LIMIT 1"
    )
    assert first == {
        "text": data["session_1"][0]["text"],
        "speaker": "Caroline",
        "ts": "2023-05-08T13:56:00Z",
        "external_id": "D1:1",
        "role": "user",
    }
    assert memory.import_file(path, "locomo").turns_added == 0
    assert memory.stats()["turn_vectors"] == expected


def test_unknown_format_and_missing_file(memory: Memory, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="unknown import format 'csv'"):
        memory.import_file(tmp_path / "x", "csv")
    with pytest.raises(NotFound, match="is not a file"):
        memory.import_file(tmp_path / "missing.json", "openai")
