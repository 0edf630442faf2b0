"""The exports people have: ChatGPT and Claude `conversations.json`, recognised by `--format auto`,
with what is left out counted and every broken record reported by where it is (tests/data)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tideline.errors import InvalidInput
from tideline.memory import Memory
from tideline.memory.importers.chatgpt import OTHER_BRANCHES

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

DATA = Path(__file__).resolve().parents[1] / "data"


def texts(memory: Memory, key: str) -> list[tuple[str, str]]:
    sid = memory.raw.session_id(key)
    assert sid is not None, key
    return [(t.role, t.text) for t in memory.session_turns(sid)]


def test_chatgpt_export_follows_the_current_branch_and_counts_what_it_leaves_out(
    memory: Memory,
) -> None:
    s = memory.import_file(DATA / "chatgpt" / "conversations.json")
    assert (s.format, s.detected, s.sessions, s.turns_added, s.problems) == (
        "chatgpt",
        True,
        2,
        8,
        [],
    )
    assert s.skipped_kinds == {
        "system and tool messages": 4,  # two system prompts, a browsing result, python output
        "hidden messages": 1,  # the custom instructions
        "non-text parts": 1,  # the hotel booking screenshot
        "messages to a tool": 2,  # the browser search, the python call
        OTHER_BRANCHES: 1,  # the regenerated first draft
    }
    assert s.skipped == sum(s.skipped_kinds.values())
    kyoto = texts(memory, "chatgpt/6650f1a2-0c1e-8001-9a1b-kyoto0000001")
    assert kyoto == [
        ("user", "I want to visit Kyoto in November, what should I see?"),
        (
            "assistant",
            "Autumn leaves peak in late November: Eikando, Tofukuji and Arashiyama are the classics.",
        ),
        ("user", "Here is my hotel booking, is it close to Gion?"),
        (
            "assistant",
            "Your hotel near Karasuma Oike is about 2 km from Gion, a 25-minute walk.",
        ),
    ]  # the regenerated first draft is on a branch the user left: not imported
    first = memory.raw.recent(10, "chatgpt/6650f1a2-0c1e-8001-9a1b-kyoto0000001")[0]
    assert (first.ts, first.external_id) == ("2024-06-01T08:00:10Z", "a3")
    titles = {r["key"]: r["title"] for r in memory.sessions()}
    assert titles["chatgpt/6668a0b0-77aa-8001-bbbb-sourdough002"] == "Sourdough starter rescue"
    again = memory.import_file(DATA / "chatgpt" / "conversations.json", "chatgpt")
    assert (again.turns_added, again.turns_existing, again.detected) == (0, 8, False)


def test_claude_export_keeps_text_parts_and_counts_the_rest(memory: Memory) -> None:
    s = memory.import_file(DATA / "claude" / "conversations.json")
    assert (s.format, s.sessions, s.turns_added, s.problems) == ("claude", 2, 6, [])
    assert s.skipped_kinds == {"non-text parts": 3, "attachments": 1, "files": 1}
    marathon = texts(memory, "claude/3f6c2a10-5b7e-4c1e-9d2a-7a1b2c3d4e5f")
    assert marathon[1] == (
        "assistant",
        "Twelve weeks is enough: add 10% a week, one long run on Sundays up to 32 km, and taper "
        "in the last two weeks.",
    )
    assert marathon[3][1] == "18 km in two days looks balanced. Keep Tuesday easy."
    lena = texts(memory, "claude/9a8b7c6d-0000-4000-8000-00000000beef")
    assert lena[0] == (
        "user",
        "My sister Lena starts her new job at the hospital in Graz on Monday.",
    )
    hits = memory.search("sister new job", include_turns=True, mode="lex").hits
    assert hits and "Lena" in hits[0].text


def test_auto_recognises_every_built_in_format(memory: Memory, tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps([{"role": "user", "content": "hello there"}]))
    lines = tmp_path / "t.jsonl"
    lines.write_text(
        json.dumps({"type": "user", "sessionId": "s", "message": {"content": "hi"}}) + "\n"
    )
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"role": "user", "content": "plain"}) + "\n")
    found = {p.name: memory.import_file(p).format for p in (chat, lines, plain)}
    assert found == {"chat.json": "openai", "t.jsonl": "transcript", "plain.jsonl": "openai"}


def test_a_file_with_nothing_to_import_says_so(memory: Memory, tmp_path: Path) -> None:
    # The case: a ChatGPT export read as a transcript found nothing and passed silently.
    wrong = memory.import_file(DATA / "chatgpt" / "conversations.json", "transcript")
    assert wrong.found == 0
    assert [p.message for p in wrong.problems][-1].startswith(
        "nothing to import from conversations.json: tideline read it as transcript"
    )
    empty = tmp_path / "conversations.json"
    empty.write_text("[]")
    with pytest.raises(InvalidInput, match="cannot tell what kind of export"):
        memory.import_file(empty)
    system_only = tmp_path / "system.json"
    system_only.write_text(json.dumps([{"role": "system", "content": ""}]))
    s = memory.import_file(system_only)
    assert s.found == 0 and "recognised it as openai" in s.problems[-1].message
    assert "1 messages without text" in s.problems[-1].message


def test_a_cut_short_export_names_the_line_where_the_json_stops(
    memory: Memory, tmp_path: Path
) -> None:
    """A truncated download is not recognised: the JSON fault is the cause, said first; the
    formats are listed as words, not a Python list."""
    whole = (DATA / "chatgpt" / "conversations.json").read_text()
    cut = tmp_path / "truncated.json"
    cut.write_text(whole[:3000])
    with pytest.raises(InvalidInput) as caught:
        memory.import_file(cut)
    message = str(caught.value)
    line = whole[:3000].count("\n") + 1
    assert message.startswith(f"truncated.json line {line}: not valid JSON ("), message
    assert "--format (chatgpt, claude, " in message and "[" not in message, message
    with pytest.raises(InvalidInput) as wrong:
        memory.import_file(cut, "csv")
    assert str(wrong.value).startswith("unknown import format 'csv'; use auto, chatgpt, claude, ")
    assert "[" not in str(wrong.value)


def test_each_broken_record_is_reported_with_its_place_and_the_rest_imported(
    memory: Memory, tmp_path: Path
) -> None:
    s = memory.import_file(DATA / "openai_broken_records.jsonl")
    assert s.turns_added == 2
    assert [(p.line, p.message.split(";")[0]) for p in s.problems] == [
        (2, "role='Robot!' is not a role name"),
        (3, "timestamp='yesterday' is not an ISO 8601 time"),
    ]
    c = memory.import_file(DATA / "chatgpt" / "broken_messages.json")
    assert c.turns_added == 2
    assert [p.message.split(";")[0] for p in c.problems] == [
        "conversation 1 ('Moving flat') message m2: role='Robot!' is not a role name",
        "conversation 1 ('Moving flat') message m3: timestamp='yesterday' is not an ISO 8601 time",
    ]
    array = tmp_path / "array.json"
    array.write_text(
        json.dumps(
            [
                {"role": "user", "content": "ok"},
                {"role": "user", "content": "x", "timestamp": "soon"},
            ]
        )
    )
    a = memory.import_file(array)
    assert [p.message.split(";")[0] for p in a.problems] == [
        "message 2: timestamp='soon' is not an ISO 8601 time"
    ]


def test_a_copy_of_the_export_under_another_name_adds_nothing(
    memory: Memory, tmp_path: Path
) -> None:
    copy = tmp_path / "conversations-2024-07.json"
    shutil.copy(DATA / "claude" / "conversations.json", copy)
    memory.import_file(DATA / "claude" / "conversations.json")
    assert memory.import_file(copy).turns_added == 0
