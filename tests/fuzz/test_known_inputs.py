"""The inputs the fault run of issue 9 found, each through the entry point that crashed on it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from rich.table import Table
from typer.testing import CliRunner

from tests.fuzz.conftest import fuzz
from tests.library.notes import make_collection
from tests.mcp.conftest import error_text, payload
from tideline.app import Tideline
from tideline.cli._output import console, err_console, styled
from tideline.cli.main import app as tideline_cli
from tideline.cli.memo import _Bar
from tideline.cli.memo import app as memo_cli
from tideline.config import Settings
from tideline.errors import InvalidInput, NotFound
from tideline.mcp import build_server
from tideline.memory import Memory

runner = CliRunner()


def cli(*args: str) -> tuple[int, str]:
    """Exit code and stderr; an uncaught exception fails the test (catch_exceptions=False)."""
    result = runner.invoke(tideline_cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stderr


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    return lines[0]


def test_undecodable_bytes_in_a_shell_query(tmp_path: Path) -> None:
    """`memo search "$(printf 'tar\\xff')"`: argv bytes that are not UTF-8, in a real process."""
    root = tmp_path / "lib"
    make_collection(root, "tools", "shell tools", {"tar.md": "# tar\n\ntar xzf backup.tgz\n"})
    env = {**os.environ, "TIDELINE_EMBEDDER": "none", "MEMO_ROOT": str(root)}
    for argv in (
        [sys.executable, "-m", "tideline.cli.memo", "search", b"tar\xff", "--json"],
        [sys.executable, "-m", "tideline", "search", b"tar\xff", "--turns", "--json"],
    ):
        done = subprocess.run(argv, env=env, capture_output=True, timeout=120)
        assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
        assert done.returncode in (0, 1)  # 1: nothing found


def test_lone_surrogates_reach_e5_replaced(memory: Memory) -> None:
    memory.sync_turn("s", "user", "We restored the backup with tar\ud800 last night", speaker="Kai")
    result = memory.search("tar\udcff backup", mode="vec", include_turns=True)
    assert result.warnings == [] and result.hits  # the vector side ran, no lexical fallback
    assert result.hits[0].text == "We restored the backup with tar\ufffd last night"


@fuzz(15)
@given(
    st.tuples(st.text(max_size=15), st.characters(categories=["Cs"]), st.text(max_size=15)).map(
        "".join
    )
)
def test_text_with_a_lone_surrogate_is_embedded_by_e5(memory: Memory, query: str) -> None:
    """A handful of examples through the real embedder (the rest of the suite runs on `none`)."""
    assert memory.search(query, mode="vec").warnings == []


def test_times_outside_the_calendar_in_utc() -> None:
    code, err = cli("search", "tar", "--since", "0001-01-01T00:00:00+05:00")
    assert code == 2 and "since='0001-01-01T00:00:00+05:00' is outside" in _one_error_line(err)
    code, err = cli("search", "tar", "--until", "9999-12-31T23:00:00-05:00")
    assert code == 2 and "until=" in _one_error_line(err)


def test_a_link_past_sqlite_integers() -> None:
    """Past 2^63 − 1 an id is refused by the option's range (`fields.id_field`), as `-k 0` is."""
    code, err = cli("write", "x", "--link", "9223372036854775808")
    assert code == 2 and "Invalid value for '--link'" in err and "Traceback" not in err
    code, err = cli("write", "x", "--link", "9223372036854775807")
    assert code == 2 and "turn 9223372036854775807 does not exist" in _one_error_line(err)


def test_deep_nesting_and_huge_numbers_are_import_problems(tmp_path: Path) -> None:
    for fmt, data in (
        ("openai", b"[" * 100_000),
        ("locomo", b"[" * 100_000),
        ("transcript", b"[" * 100_000),
        ("openai", b"[" + b"9" * 5000 + b"]"),
    ):
        path = tmp_path / f"{fmt}.json"
        path.write_bytes(data)
        result = runner.invoke(tideline_cli, ["import", str(path), "-f", fmt, "--json"])
        assert result.exception is None or isinstance(result.exception, SystemExit), fmt
        problems = json.loads(result.stdout)["problems"]
        assert result.exit_code == 1 and len(problems) == 2, (fmt, problems)
        assert problems[1]["message"].startswith("nothing to import from")  # #13


def _locomo(tmp_path: Path, **conversation: Any) -> Path:
    path = tmp_path / "locomo.json"
    base = {"speaker_a": "Caroline", "speaker_b": "Mel", **conversation}
    path.write_bytes(json.dumps({"sample_id": "c1", "conversation": base}).encode())
    return path


def test_locomo_reads_a_latin1_byte_and_reports_a_bad_date(memory: Memory, tmp_path: Path) -> None:
    path = _locomo(
        tmp_path,
        session_1_date_time="1:56 pm on 8 May, 2023",
        session_1=[{"speaker": "Caroline", "text": "CAFE", "dia_id": "D1:1"}],
    )
    path.write_bytes(path.read_bytes().replace(b"CAFE", b"caf\xe9"))
    summary = memory.import_file(path, "locomo")
    assert (summary.turns_added, summary.problems) == (1, [])
    assert memory.raw.recent(1)[0].text == "caf\ufffd"

    summary = memory.import_file(
        _locomo(tmp_path, session_1_date_time=5, session_1=[{"speaker": "Mel", "text": "hi"}]),
        "locomo",
    )
    assert summary.turns_added == 0
    assert [p.message for p in summary.problems][:1] == [
        "session_1: unreadable date 5; write it like '1:56 pm on 8 May, 2023'"
    ]
    assert summary.problems[-1].message.startswith("nothing to import from locomo.json")


def test_a_turn_that_breaks_a_rule_is_a_problem_not_a_failed_file(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "kept"},
        {"role": "Not A Role!", "content": "dropped"},
        {"role": "user", "content": "also kept", "timestamp": {"not": "a time"}},
        {"role": "user", "content": "a surrogate \ud800 is replaced", "name": 7},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines))
    summary = memory.import_file(path, "openai")
    assert summary.turns_added == 2
    assert [(p.line, p.message.split("=")[0]) for p in summary.problems] == [
        (2, "role"),
        (3, "timestamp"),
    ]  # each named by its line (#13)


@pytest.mark.parametrize(
    ("path", "says"),
    [("a\x00b.json", "contains a NUL byte"), ("a" * 5000 + ".json", "longer than the OS allows")],
)
def test_import_paths_no_file_can_have(memory: Memory, path: str, says: str) -> None:
    with pytest.raises(InvalidInput, match=says) as caught:
        memory.import_file(path, "openai")
    assert not isinstance(caught.value, NotFound) and "\n" not in str(caught.value)


def test_over_mcp_bad_times_ids_and_surrogates_are_tool_errors() -> None:
    app = Tideline(Settings.load(overrides={"embedder": "none"}))
    server = build_server(app)

    async def scenario() -> None:
        async with Client(server) as client:
            since = "0001-01-01T00:00:00+05:00"
            msg = error_text(
                await client.call_tool("memory_search", {"query": "x", "since": since})
            )
            assert msg.startswith(f"since={since!r} is outside"), msg
            msg = error_text(await client.call_tool("memory_trace", {"narrative_id": 2**63}))
            assert "less than or equal to 9223372036854775807" in msg
            msg = error_text(await client.call_tool("memory_trace", {"narrative_id": 2**63 - 1}))
            assert "narrative 9223372036854775807 does not exist" in msg
            turn = {"session": "s\ud800", "role": "user", "text": "tar\udcff", "speaker": "\ud800"}
            assert payload(await client.call_tool("sync_turn", turn))["created"] is True
            found = payload(await client.call_tool("memory_search", {"query": "tar\ud800"}))
            assert found is not None

    try:
        anyio.run(scenario)
    finally:
        app.close()


def test_rich_markup_in_user_text_is_printed_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[/x]` in a narrative, a note heading or a query is text: printed as typed, never parsed
    as a rich tag (a closing tag with no opening one raised MarkupError from every display)."""
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    typed = "kept [/x] [b]y[/b]"
    assert runner.invoke(tideline_cli, ["write", typed], catch_exceptions=False).exit_code == 0
    shown = runner.invoke(tideline_cli, ["search", "kept"], catch_exceptions=False)
    assert shown.exit_code == 0 and typed in shown.stdout
    trace = runner.invoke(tideline_cli, ["trace", "1"], catch_exceptions=False)
    assert trace.exit_code == 0 and trace.stdout.startswith(typed)
    preview = runner.invoke(tideline_cli, ["forget", "kept"], catch_exceptions=False)
    assert typed in preview.stdout and "\\[" not in preview.stdout
    code, err = cli("search", "kept", "--since", "[/x]")
    assert code == 2 and "since='[/x]'" in _one_error_line(err)

    root = tmp_path / "lib"
    make_collection(root, "c", "Notes", {"n.md": "# Tides [/z]\n\nharbour lanterns\n"})
    monkeypatch.setenv("MEMO_ROOT", str(root))
    found = runner.invoke(memo_cli, ["search", "harbour", "--mode", "lex"], catch_exceptions=False)
    assert found.exit_code == 0 and "Tides [/z]" in found.stdout
    none = runner.invoke(memo_cli, ["search", "[/x]", "--mode", "lex"], catch_exceptions=False)
    assert none.exit_code == 1 and "nothing relevant found for '[/x]'" in none.stderr


def test_cli_consoles_never_parse_markup() -> None:
    """Every CLI line goes through these two consoles; colour is `styled`, never a `[tag]`."""
    for shared in (console, err_console):
        with shared.capture() as captured:
            shared.print("[/x] [red]y[/red]", highlight=False)
        assert captured.get().strip() == "[/x] [red]y[/red]"


def test_a_collection_named_like_a_tag_in_memos_progress_bar() -> None:
    """The bar's task names are collection folders: `[/x]` there is text too."""
    bar = _Bar(True)
    assert bar.progress is not None
    bar("[/x]: scanning", 1, 2)
    with err_console.capture() as captured:
        err_console.print(bar.progress.get_renderable())
    assert "[/x]: scanning" in captured.get()


LOOSE_JOINERS = ["\u200d\u200d😀💻", "\u200d\u200d💻", "1\u200d\u200d😀r 👩‍💻", "x\u200d🏳️‍🌈 \u200d"]


@pytest.mark.parametrize("text", LOOSE_JOINERS)
def test_zero_width_joiners_that_join_nothing_print_at_any_width(text: str) -> None:
    """rich 15 raised IndexError / ZeroDivisionError cutting such text to a width (the CLI fuzz
    of bench/faults.py found it in `tideline search`'s table); a joiner between emoji stays."""
    for width in range(6, 40):
        table = Table("id", "text", width=width)
        table.add_row("1", text * 3)
        with console.capture() as captured:
            console.print(table)
            console.print(styled(("1.", "bold"), f" {text}"), width=width)
        if "👩‍💻" in text:
            assert "👩‍💻" in captured.get()


def test_a_narrative_of_loose_joiners_is_listed_by_tideline_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    typed = "mk60x " + "\u200d\u200d🌈🧠\u200d🧠\u200d💻🌈🧠💻\u200d🌈👩😀🧠👩\u200d🌈\u200d🏳🧠" * 8
    assert runner.invoke(tideline_cli, ["write", typed], catch_exceptions=False).exit_code == 0
    shown = runner.invoke(tideline_cli, ["search", "mk60x", "-k", "1"], catch_exceptions=False)
    assert shown.exit_code == 0 and "mk60x" in shown.stdout


def test_no_driver_writes_rich_markup_tags() -> None:
    """Markup is off on both consoles (user text prints as typed), so a `[red]…[/red]` in a
    driver would print literally: colour goes through `styled`."""
    src = Path(__file__).resolve().parents[2] / "src" / "tideline"
    tag = re.compile(r"\[(red|green|yellow|blue|bold|dim|italic|cyan|magenta)\].*\[/\1\]")
    found = [
        f"{p.relative_to(src)}:{n}"
        for p in sorted((src / "cli").glob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if tag.search(line)
    ]
    assert found == []


def test_lone_surrogates_in_filters_and_prefixes_are_answers_not_crashes(
    tmp_path: Path,
) -> None:
    """Found by bench/faults.py's MCP argument fuzz (#21): a lone surrogate in
    memory_profile's subject, memory_forget's session and memo_route's prefix crashed the tool
    (UnicodeEncodeError binding it to SQL, or PydanticSerializationError echoing it back)."""
    root = tmp_path / "lib"
    make_collection(root, "log", "A running log", {"day.md": "# Day\n"})
    app = Tideline(Settings.load(overrides={"embedder": "none", "memo_root": str(root)}))

    async def scenario() -> None:
        async with Client(build_server(app)) as client:
            found = await client.call_tool(
                "memory_profile", {"subject": "\ud800", "category": "\udfff"}
            )
            assert payload(found) == {"facts": []}
            msg = error_text(await client.call_tool("memory_forget", {"session": "s\ud805"}))
            assert "does not exist" in msg
            route = payload(
                await client.call_tool("memo_route", {"query": "x", "prefix": "\ud808"})
            )
            assert route["candidates"] == []

    try:
        anyio.run(scenario)
    finally:
        app.close()
