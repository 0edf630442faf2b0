"""The first day with real data, from the shell: import an export in one command, find and forget
a memory, correct one, back everything up and restore it into a new home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tideline.cli.main import app

DATA = Path(__file__).resolve().parents[1] / "data"
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_import_says_what_it_recognised_and_what_it_left_out() -> None:
    code, out, err = run("import", str(DATA / "chatgpt" / "conversations.json"))
    assert code == 0, err
    assert "as chatgpt" in err
    assert "2 sessions, 8 turns added, 0 already there, 9 left out (4 system and tool" in out
    assert "1 messages on edited or regenerated branches)" in out  # what the user left
    code, out, err = run("import", str(DATA / "claude" / "conversations.json"), "--json")
    summary = json.loads(out)
    assert (code, summary["format"], summary["detected"], summary["turns_added"]) == (
        0,
        "claude",
        True,
        6,
    )


def test_nothing_to_import_and_broken_records_exit_1_with_where_and_why() -> None:
    code, _, err = run("import", str(DATA / "chatgpt" / "conversations.json"), "-f", "transcript")
    assert code == 1
    assert "nothing to import from conversations.json: tideline read it as transcript" in err
    code, out, err = run("import", str(DATA / "openai_broken_records.jsonl"))
    assert (
        code == 1 and "2 turns added, 0 already there, 2 left out (2 refused, listed below)" in out
    )
    lines = [line for line in err.splitlines() if line.startswith("line ")]
    assert [line.split(";")[0] for line in lines] == [
        "line 2: role='Robot!' is not a role name",
        "line 3: timestamp='yesterday' is not an ISO 8601 time",
    ]


def test_find_forget_and_correct_from_the_shell() -> None:
    run("import", str(DATA / "claude" / "conversations.json"))
    hits = json.loads(run("search", "Lena new job", "--turns", "--json")[1])["hits"]
    turn = next(h["id"] for h in hits if h["type"] == "turn" and "Lena" in h["text"])
    code, out, _ = run("write", "Lena starts at the Graz hospital", "--link", str(turn), "--json")
    note = json.loads(out)["id"]

    code, out, err = run("forget", "Lena")
    assert code == 0 and "would forget 0 sessions, 2 turns, 1 narratives" in err
    assert "--yes" in err and "Lena" in out
    assert run("search", "Lena", "--turns", "--mode", "lex")[0] == 0  # still there
    code, out, _ = run("forget", "Lena", "--yes", "--why", "asked by the user")
    assert code == 0 and "forgot 0 sessions, 2 turns, 1 narratives" in out
    assert run("search", "Lena", "--turns", "--mode", "lex")[0] == 1  # nothing found
    trace = json.loads(run("trace", str(note), "--json")[1])
    assert trace["narrative"]["gesture"] == "[forgotten]"
    assert trace["windows"][0][0]["turn"]["forgotten_why"] == "asked by the user"
    code, _, err = run("forget", "Lena")
    assert code == 1 and "nothing matches" in err

    old = json.loads(run("write", "The marathon is in Berlin", "--json")[1])["id"]
    code, out, _ = run("write", "The marathon is in Vienna", "--supersedes", str(old))
    assert code == 0 and f"supersedes narrative {old}" in out
    hits = json.loads(run("search", "marathon", "--json")[1])["hits"]
    assert old not in [h["id"] for h in hits if h["type"] == "narrative"]
    code, _, err = run("write", "again", "--supersedes", str(old))
    assert code == 2 and "already superseded" in err


def _undated(bundle: Path) -> list[object]:
    """A bundle's records with the manifest's export time left out (two exports a second apart
    differ in it alone)."""
    records: list[object] = [json.loads(line) for line in bundle.read_text().splitlines()]
    manifest = records[0]
    assert isinstance(manifest, dict) and "exported_at" in manifest
    manifest.pop("exported_at")
    return records


def test_export_restores_into_a_new_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run("import", str(DATA / "chatgpt" / "conversations.json"))
    run("write", "Mia plans a Kyoto trip in November", "--tag", "travel")
    backup = tmp_path / "backup.jsonl"
    code, _, err = run("export", str(backup))  # the file is the natural argument
    assert code == 0 and f"to {backup}" in err and "1 narratives" in err
    code, _, err = run("export", "-o", str(tmp_path / "same.jsonl"))  # -o still works
    assert code == 0 and _undated(tmp_path / "same.jsonl") == _undated(backup)
    code, _, err = run("export", str(backup), "-o", str(tmp_path / "other.jsonl"))
    assert code == 2 and "name the file once" in err
    before = run("search", "Kyoto autumn", "--turns", "--json")[1]
    code, out, _ = run("export", "--format", "markdown")
    assert code == 0 and out.startswith("# Tideline export of agent")

    monkeypatch.setenv("TIDELINE_HOME", str(tmp_path / "new-home"))
    assert run("stats", "--json")[0] == 0
    code, out, err = run("import", str(backup))
    assert code == 0 and "as tideline" in err and "1 narratives added" in out
    assert run("search", "Kyoto autumn", "--turns", "--json")[1] == before

    code, _, err = run("export", "-o", str(tmp_path / "no-such-dir" / "b.jsonl"))
    assert code == 2 and "cannot write" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("export", "--format", "csv")
    assert code == 2
