"""Import bookkeeping at the edges: a byte-order mark, refused records counted with the rest,
turns without a time of their own, and a large export read one conversation at a time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tideline.memory import Memory
from tideline.memory.importers import ImportBatch
from tideline.memory.importers._stream import json_array

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_byte_order_mark_is_read_past(memory: Memory, tmp_path: Path) -> None:
    export = tmp_path / "conversations.json"
    export.write_bytes(b"\xef\xbb\xbf" + (DATA / "chatgpt" / "conversations.json").read_bytes())
    s = memory.import_file(export)
    assert (s.format, s.turns_added, s.problems) == ("chatgpt", 8, [])
    lines = tmp_path / "t.jsonl"
    lines.write_text('{"role": "user", "content": "hi", "sessionId": "b"}\n', encoding="utf-8-sig")
    s = memory.import_file(lines)
    assert (s.format, s.turns_added, s.problems) == ("transcript", 1, [])


def _transcript(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps({"sessionId": "s", **r}) + "\n" for r in rows))
    return path


def test_a_turn_without_a_time_takes_its_neighbours(memory: Memory, tmp_path: Path) -> None:
    """Dated at import time, the undated turn was the newest, and "yesterday" meant the day
    before the import instead of the day before the conversation's last day."""
    path = _transcript(
        tmp_path / "t.jsonl",
        [
            {"type": "user", "message": {"role": "user", "content": "first, undated"}},
            {"type": "user", "message": {"role": "user", "content": "a"}, "timestamp": "2023-05-07T10:00:00Z"},
            {"type": "assistant", "message": {"role": "assistant", "content": "b, undated"}},
            {"type": "user", "message": {"role": "user", "content": "c"}, "timestamp": "2023-05-08T09:00:00Z"},
            {"type": "assistant", "message": {"role": "assistant", "content": "d, undated"}},
        ],
    )  # fmt: skip
    s = memory.import_file(path)
    assert (s.turns_added, s.undated, s.warnings) == (5, 0, [])
    stamps = [t.ts for t in memory.session_turns("transcript/s")]
    assert stamps == [
        "2023-05-07T10:00:00Z",
        "2023-05-07T10:00:00Z",
        "2023-05-07T10:00:00Z",
        "2023-05-08T09:00:00Z",
        "2023-05-08T09:00:00Z",
    ]
    assert memory.raw.latest_day() == "2023-05-08"
    window = memory.window_for("what did I say yesterday?")
    assert window is not None and window.start.date().isoformat() == "2023-05-07"
    again = memory.import_file(path)
    assert (again.turns_added, again.turns_existing) == (0, 5)


def test_a_file_without_any_time_says_its_turns_are_dated_now(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hello"}]))
    s = memory.import_file(path)
    assert s.undated == 1
    assert s.warnings == [
        "1 turns have no time, nor a dated turn or conversation time beside them; "
        "they are dated at import time"
    ]


def test_refused_records_count_among_those_left_out(memory: Memory) -> None:
    s = memory.import_file(DATA / "openai_broken_records.jsonl")
    assert (s.turns_added, s.skipped, s.refused, s.left_out, len(s.problems)) == (2, 0, 2, 2, 2)


def _elements(tmp_path: Path, text: str, chunk: int) -> tuple[list[Any], ImportBatch]:
    path = tmp_path / "a.json"
    path.write_text(text)
    batch = ImportBatch()
    return list(json_array(path, batch, lambda doc: [("alone", doc)], chunk)), batch


DOCS = [
    "[]",
    " [ ] ",
    '[{"a": "],[{\\"", "b": [1, 2, {"c": null}]},\n 12345678, "x", true, [[]]]\n',
    '[\n  {"title": "Kyoto", "n": -1.5e3},\n  {"title": "\\u00e9t\\u00e9"}\n]',
]


@pytest.mark.parametrize("chunk", [1, 2, 7, 1 << 20])
@pytest.mark.parametrize("text", DOCS)
def test_an_array_read_in_pieces_equals_it_read_whole(
    tmp_path: Path, text: str, chunk: int
) -> None:
    found, batch = _elements(tmp_path, text, chunk)
    assert (found, batch.problems) == (json.loads(text), [])


@pytest.mark.parametrize(
    ("text", "kept", "line", "says"),
    [
        ('[{"a": 1},\n{"b": 2},\n{"c": ', [{"a": 1}, {"b": 2}], 3, "Expecting value"),
        ("[1,\n2\n3]", [1, 2], 3, "expected ',' or ']' after an element"),
        ("[1]\n[2]", [1], 2, "extra data after the closing ']'"),
        ('{"mapping": {}}', [("alone", {"mapping": {}})], None, None),
    ],
)
def test_where_an_array_stops_being_json_is_named_and_what_came_before_is_kept(
    tmp_path: Path, text: str, kept: list[Any], line: int | None, says: str | None
) -> None:
    for chunk in (1, 3, 1 << 20):
        found, batch = _elements(tmp_path, text, chunk)
        assert found == kept
        assert [(p.line, says in p.message) for p in batch.problems] == (
            [(line, True)] if says else []
        )


def test_a_cut_export_keeps_the_conversations_before_the_cut(
    memory: Memory, tmp_path: Path
) -> None:
    whole = json.loads((DATA / "chatgpt" / "conversations.json").read_text())
    text = json.dumps(whole, indent=1)
    cut = tmp_path / "conversations.json"
    cut.write_text(text[: text.index('"Sourdough starter rescue"') + 10])
    s = memory.import_file(cut, "chatgpt")
    assert s.sessions == 1 and s.turns_added > 0
    assert len(s.problems) == 1 and "not valid JSON" in s.problems[0].message
    assert s.problems[0].line is not None and s.problems[0].line > 1
