"""memo_write / memo_read over MCP (the SDK client, in memory) and `memo write|read`: a note is
written whole, inside a collection, never outside the root or over a human's note."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from tests.library.corpus import build
from tests.library.notes import make_collection
from tideline.app import Tideline, library_from
from tideline.cli.memo import app as memo_cli
from tideline.config import DEFAULTS, Settings
from tideline.embed import Embedder
from tideline.mcp import build_server


@pytest.fixture
def library_app(lib_root: Path, e5: Embedder) -> Iterator[Tideline]:
    build(lib_root)
    app = Tideline(Settings.load(overrides={"memo_root": str(lib_root)}), embedder=e5)
    yield app
    app.close()


def _call(app: Tideline, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    """(is_error, payload or error text) of one tool call through the SDK client."""

    async def go() -> tuple[bool, Any]:
        async with Client(build_server(app)) as client:
            result = await client.call_tool(tool, args)
            if result.is_error:
                return True, result.content[0].text
            data = result.structured_content
            return False, data if data is not None else json.loads(result.content[0].text)

    return anyio.run(go)


def _leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*.tmp")]


def test_an_agent_writes_a_note_finds_it_and_reads_it_back(
    library_app: Tideline, lib_root: Path
) -> None:
    err, made = _call(
        library_app,
        "memo_write",
        {
            "path": "infra/incidents/2026-06-01.md",
            "text": "# Outage\n\nThe VPN gateway vpn-7 fell over.",
        },
    )
    assert not err and made["created"] and made["collection"] == "infra"
    assert (lib_root / "infra/incidents/2026-06-01.md").read_text().endswith("fell over.\n")
    err, found = _call(
        library_app, "memo_search", {"query": "vpn-7 gateway", "path": "infra", "mode": "lex"}
    )
    assert not err and found["hits"][0]["path"] == "infra/incidents/2026-06-01.md"

    err, more = _call(
        library_app,
        "memo_write",
        {"file": "infra/incidents/2026-06-01.md", "content": "Fixed by a reboot.", "append": True},
    )
    assert not err and not more["created"] and more["added_at_line"] == 5
    err, read = _call(library_app, "memo_read", {"path": "infra/incidents/2026-06-01.md:5"})
    assert not err and read["text"] == "Fixed by a reboot." and read["start"] == 5
    err, whole = _call(library_app, "memo_read", {"path": "infra/incidents/2026-06-01.md"})
    assert whole["total_lines"] == 5 and whole["text"].startswith("# Outage") and not whole["more"]
    err, part = _call(library_app, "memo_read", {"path": "infra/runbook.md", "start": 2, "end": 3})
    assert not err and (part["start"], part["end"]) == (2, 3) and part["more"]
    assert _leftovers(lib_root) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "infra/runbook.md", "text": "x"}, "already exists; pass append=true"),
        ({"path": "../outside.md", "text": "x"}, "outside the library root"),
        ({"path": "/etc/cron.d/x.md", "text": "x"}, "outside the library root"),
        ({"path": "drafts/idea.md", "text": "x"}, "memo init-collection drafts"),
        ({"path": "loose.md", "text": "x"}, "not in a collection"),
        ({"path": "infra/notes.txt", "text": "x"}, "a note is a .md file"),
        ({"path": "infra/_meta.yaml", "text": "x"}, "a note is a .md file"),
        ({"path": "infra/.memo/x.md", "text": "x"}, "hidden"),
        ({"path": "infra/a/b/c.md", "text": "x"}, "deeper than 2 folders"),
        ({"path": "infra/new.md", "text": "   "}, "text is empty"),
    ],
)
def test_bad_writes_are_refused_in_one_line_and_write_nothing(
    library_app: Tideline, lib_root: Path, args: dict[str, str], message: str
) -> None:
    before = sorted(str(p) for p in lib_root.rglob("*") if ".memo" not in p.parts)
    original = (lib_root / "infra/runbook.md").read_bytes()
    err, text = _call(library_app, "memo_write", args)
    assert err and message in text and "\n" not in text
    assert sorted(str(p) for p in lib_root.rglob("*") if ".memo" not in p.parts) == before
    assert (lib_root / "infra/runbook.md").read_bytes() == original


def test_links_never_lead_a_write_out_of_the_root(
    library_app: Tideline, lib_root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("keep\n")
    os.symlink(outside, lib_root / "infra" / "out")
    os.symlink(outside / "secret.md", lib_root / "infra" / "secret.md")
    for path in ("infra/out/x.md", "infra/secret.md"):
        err, text = _call(library_app, "memo_write", {"path": path, "text": "x", "append": True})
        assert err and "outside the library root" in text, text
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    assert (outside / "secret.md").read_text() == "keep\n"
    err, text = _call(library_app, "memo_read", {"path": "infra/secret.md"})
    assert err and "outside the library root" in text


def test_a_note_is_never_larger_than_the_index_reads(lib_root: Path) -> None:
    make_collection(lib_root, "log", "A running log", {"day.md": "# Day\n"})
    with library_from(DEFAULTS, lib_root, max_file_bytes=1000) as lib:
        lib.write("log/day.md", "a" * 900, append=True)
        with pytest.raises(Exception, match="more than the 1,000 a note may have"):
            lib.write("log/day.md", "b" * 200, append=True)
    assert "b" not in (lib_root / "log/day.md").read_text()
    assert _leftovers(lib_root) == []


def test_memo_write_and_read_from_the_shell(
    lib_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(lib_root)
    monkeypatch.setenv("MEMO_ROOT", str(lib_root))
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    runner = CliRunner()
    done = runner.invoke(
        memo_cli, ["write", "life/home/todo.md", "-"], input="# Todo\n\nbuy flour\n"
    )
    assert done.exit_code == 0 and "life/home/todo.md created" in done.stdout
    done = runner.invoke(memo_cli, ["write", "life/home/todo.md", "- more", "--append", "--json"])
    assert done.exit_code == 0 and json.loads(done.stdout)["added_at_line"] == 5
    done = runner.invoke(memo_cli, ["read", "life/home/todo.md", "--start", "3", "--end", "5"])
    assert done.exit_code == 0 and done.stdout == "buy flour\n\n- more\n"  # a paragraph apart
    done = runner.invoke(memo_cli, ["write", "life/home/todo.md", "again"])
    assert done.exit_code == 2 and "already exists" in done.stderr
    done = runner.invoke(memo_cli, ["read", "life/home/nope.md"])
    assert done.exit_code == 2 and "no such note" in done.stderr
