"""`memo` end to end through its typer app, on a tmp library, with --json."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers import wait_until
from tests.library.corpus import build
from tests.library.notes import make_collection, write
from tideline.cli.memo import app


@pytest.fixture
def memo(lib_root: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMO_ROOT", str(lib_root))
    runner = CliRunner()

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(app, list(args), catch_exceptions=False)
        assert result.exit_code == code, (result.stdout, result.stderr)
        return result

    return invoke


def test_init_index_search_status_reindex(memo, lib_root: Path) -> None:
    build(lib_root)
    write(lib_root, "drafts/idea.md", "# Idea\n\nA plan for a zipline.\n")
    status = json.loads(memo("status", "--json").stdout)
    assert any(p["kind"] == "unregistered" and p["path"] == "drafts" for p in status["problems"])

    made = json.loads(
        memo("init-collection", "drafts", "-d", "Ideas not yet sorted", "--json").stdout
    )
    assert made["path"] == "drafts" and (lib_root / "drafts/_meta.yaml").exists()
    assert "drafts:" in (lib_root / "_registry.yaml").read_text()

    first = json.loads(memo("index", "--json").stdout)["collections"]
    assert {c["collection"] for c in first} == {"drafts", "infra", "life/home"}
    again = json.loads(memo("index", str(lib_root), "--json").stdout)["collections"]
    assert all(c["changed"] == 0 and c["embedded"] == 0 for c in again)

    found = json.loads(memo("search", "zipline", "--path", "drafts", "--json").stdout)
    assert found["hits"][0]["location"] == "drafts/idea.md:1"
    assert {"lex_rank", "vec_rank", "score", "heading", "text"} <= set(found["hits"][0])
    human = memo("search", "firewall rule 4711", "--path", "infra", "--k", "1").stdout
    assert "infra/runbook.md:13" in human and "Policy based routing" in human

    status = json.loads(memo("status", "infra", "--json").stdout)
    (infra,) = status["collections"]
    assert infra["files"] == 1 and infra["behind"] == 0

    redone = json.loads(memo("reindex", "infra", "--full", "--json").stdout)["collections"]
    assert redone[0]["changed"] == 1

    routed = json.loads(memo("route", "zipline ideas", "--json").stdout)
    assert routed["strategy"] == "flat" and routed["candidates"][0]["name"] == "drafts"


def test_status_lists_skipped_notes_with_the_reason(memo, lib_root: Path, tmp_path: Path) -> None:
    make_collection(lib_root, "c", "Mixed", {"n.md": "# n\n\nfine\n"})
    (lib_root / "c/binary.md").write_bytes(b"\x00\x01 not text")
    os.symlink(write(tmp_path, "secret.md", "# s\n"), lib_root / "c/leak.md")
    memo("index", "--json")
    (c,) = json.loads(memo("status", "--json").stdout)["collections"]
    assert {(s["path"], s["kind"]) for s in c["skipped"]} == {
        ("c/binary.md", "skipped"),
        ("c/leak.md", "link-outside"),
    }
    assert (
        "links outside the library" in {s["path"]: s["reason"] for s in c["skipped"]}["c/leak.md"]
    )
    human = memo("status").stderr
    assert "link-outside: c/leak.md: links outside the library" in human
    assert "skipped: c/binary.md: binary content" in human


def test_errors_are_one_line_on_stderr_with_a_nonzero_exit(memo, lib_root: Path) -> None:
    build(lib_root)
    bad = memo("search", "x", "--path", "../../etc", code=2)
    assert bad.stdout == "" and "outside the library root" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    nowhere = memo("search", "x", "--path", "nope", code=2)
    assert "no such file or folder" in nowhere.stderr
    mode = memo("search", "x", "--mode", "fuzzy", code=2)
    assert "'fuzzy' is not one of 'hybrid'" in " ".join(mode.stderr.replace("│", "").split())
    deep = memo("init-collection", "a/b/c", "-d", "too deep", code=2)
    assert "1 to 2 levels" in deep.stderr
    again = memo("init-collection", "infra", "-d", "dup", code=2)
    assert "already exists" in again.stderr


def test_no_results_for_a_long_query_quotes_only_its_start(memo, lib_root: Path) -> None:
    make_collection(lib_root, "c", "One note", {"n.md": "# n\n\nharbour lanterns\n"})
    query = "q" * 131_000
    result = memo("search", query, "--mode", "lex", code=1)
    assert result.stdout == ""
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("nothing relevant found")]
    assert "131,000 characters" in line and len(line) < 200


def test_no_results_for_a_short_query_quotes_it_whole(memo, lib_root: Path) -> None:
    make_collection(lib_root, "c", "One note", {"n.md": "# n\n\nharbour lanterns\n"})
    result = memo("search", "zeppelin", "--mode", "lex", code=1)
    assert "nothing relevant found for 'zeppelin' in *" in result.stderr


def test_no_root_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMO_ROOT", raising=False)
    result = CliRunner().invoke(app, ["status"])
    assert result.exit_code == 2 and "MEMO_ROOT" in result.stderr


def test_watch_indexes_a_hand_edit_and_says_so_in_json(lib_root: Path, tmp_path: Path) -> None:
    """`memo watch --json` (the app's watcher over its library): the first catch-up and then a
    note saved by hand each come out as one JSON line, until Ctrl-C."""
    make_collection(lib_root, "notes", "Hand notes", {"a.md": "# A\n\nThe first note.\n"})
    env = dict(os.environ, TIDELINE_HOME=str(tmp_path / "home"), TIDELINE_EMBEDDER="none")
    # Ctrl-C as in a terminal, even when this run's own SIGINT is ignored (a background job's is)
    run = "from tideline.cli.memo import app; app(prog_name='memo')"
    argv = [
        sys.executable,
        "-c",
        f"import signal; signal.signal(2, signal.default_int_handler); {run}",
    ]
    errors = tmp_path / "stderr.txt"
    lines: list[dict[str, object]] = []
    with (
        errors.open("w") as stderr,
        subprocess.Popen(
            [*argv, "watch", str(lib_root), "--json", "--debounce", "0.2"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        ) as proc,
    ):
        reader = threading.Thread(
            target=lambda: lines.extend(json.loads(line) for line in proc.stdout or ()),
            daemon=True,
        )
        reader.start()
        try:
            wait_until(lambda: lines or proc.poll() is not None, timeout=60)
            assert lines, errors.read_text()
            assert lines[0]["collection"] == "notes" and lines[0]["changed"] == 1
            wait_until(lambda: (lib_root / ".memo-watch").exists(), timeout=60)  # it watches
            write(lib_root, "notes/b.md", "# B\n\nA zipline across the valley.\n")
            wait_until(lambda: len(lines) > 1, timeout=30)
            assert lines[1]["collection"] == "notes" and lines[1]["changed"] == 1
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a failure, never a hang of the whole suite
                proc.kill()
                proc.wait(timeout=30)
                raise AssertionError("memo watch did not stop on Ctrl-C within 30 s") from None
            finally:
                reader.join(timeout=5)
    assert len(lines) == 2, lines  # nothing changed after the edit: no more lines
