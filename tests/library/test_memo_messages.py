"""memo's messages lead somewhere: what was not indexed and the command that fixes it, no advice
that then fails, skipped files in the status table, and k outside its range refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.library.notes import make_collection, write
from tideline.cli.memo import app

Memo = Callable[..., Result]


@pytest.fixture
def memo(lib_root: Path, monkeypatch: pytest.MonkeyPatch) -> Memo:
    monkeypatch.setenv("MEMO_ROOT", str(lib_root))
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    runner = CliRunner()

    def invoke(*args: str, code: int = 0) -> Result:
        result = runner.invoke(app, list(args), catch_exceptions=False)
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result

    return invoke


def test_notes_without_meta_are_named_with_the_fix(memo: Memo, lib_root: Path) -> None:
    write(lib_root, "notes/a.md", "# A\n\nthe tar flags\n")
    done = memo("index", code=1)
    assert "notes has 1 note(s) but no _meta.yaml" in done.stderr
    assert "memo init-collection notes --description" in done.stderr
    assert "nothing indexed" in done.stderr
    data = json.loads(memo("index", "--json", code=1).stdout)
    assert data["not_indexed"][0]["path"] == "notes"

    found = memo("search", "tar", code=2)
    line = done_line(found.stderr)
    assert "has no collections" in line and "memo init-collection notes" in line
    assert "searched all 0" not in found.stderr

    make_collection(lib_root, "work", "Work notes", {"w.md": "# W\n\ntar at work\n"})
    found = memo("search", "tar", "--mode", "lex")
    assert "expensive" not in found.stderr  # '*' is a search like any other
    assert "not searched: notes has 1 note(s)" in found.stderr


def test_a_broken_meta_never_advises_init_collection(memo: Memo, lib_root: Path) -> None:
    write(lib_root, "bad/_meta.yaml", "description: [unclosed\n")
    write(lib_root, "bad/x.md", "# X\n")
    write(lib_root, "bad/sub/y.md", "# Y\n")
    make_collection(lib_root, "ok", "Fine", {"o.md": "# O\n"})
    for args in (("index",), ("status",), ("search", "x", "-p", "bad"), ("search", "x")):
        done = CliRunner().invoke(app, list(args))
        assert "init-collection bad" not in done.stderr, args
        assert "init-collection bad/sub" not in done.stderr, args
    done = memo("search", "x", "-p", "bad/x.md", code=2)
    assert "bad/x.md is not searchable" in done.stderr and "not valid YAML at line 2" in done.stderr
    # the advice it used to give fails, which is why it is no longer given
    refused = memo("init-collection", "bad", "-d", "x", code=2)
    assert "already exists" in refused.stderr


def test_status_lists_skipped_files_and_invisible_folders_in_its_table(
    memo: Memo, lib_root: Path
) -> None:
    make_collection(lib_root, "work", "Work notes", {"c.md": "# C\n\nfine\n"})
    (lib_root / "work/b.md").write_bytes(b"# B\n\xff\xfe broken")
    write(lib_root, "drafts/d.md", "# D\n")
    memo("index")
    table = memo("status").stdout
    header = next(line for line in table.splitlines() if "collection" in line)
    assert "skipped" in header
    work = next(line for line in table.splitlines() if line.startswith("│ work"))
    assert work.rstrip(" │").endswith("1")  # the skipped column
    assert any("drafts/" in line and "not a collection" in line for line in table.splitlines())
    status = json.loads(memo("status", "--json").stdout)
    skipped = status["collections"][0]["skipped"]
    assert skipped[0]["path"] == "work/b.md" and "UTF-8" in skipped[0]["reason"]


@pytest.mark.parametrize(
    "args",
    [
        ("search", "x", "--k", "0"),
        ("search", "x", "-k", "-1"),
        ("search", "x", "--k", "101"),
        ("route", "x", "--k", "0"),
    ],
)
def test_k_outside_its_range_is_an_error(memo: Memo, lib_root: Path, args: tuple[str]) -> None:
    make_collection(lib_root, "work", "Work notes", {"c.md": "# C\n"})
    done = memo(*args, code=2)
    assert "--k" in done.stderr


def done_line(stderr: str) -> str:
    """The error line of a failed command (its one line on stderr)."""
    return next(line for line in stderr.splitlines() if line.startswith("error:"))
