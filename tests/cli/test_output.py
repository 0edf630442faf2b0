"""What the CLI prints is for people: `stats` with words and one column of values (no Python
dict, no `None`), and tables in a pipe or a script's capture not cut to 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tideline.cli.main import app

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat.json"
LONG = "locomo/conv-26/session_1 with a key far too long for eighty columns"


def run(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.fixture(autouse=True)
def lexical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")  # the command's environment
    monkeypatch.delenv("COLUMNS", raising=False)


def test_stats_reads_as_words_in_one_column() -> None:
    run("write", "The heron came back")
    lines = run("stats").splitlines()
    assert lines[0].split() == ["sessions", "0"]
    columns = {len(line) - len(line.split("  ")[-1].lstrip()) for line in lines}
    assert len(columns) == 1, lines  # every value starts in the same column
    text = "\n".join(line for line in lines if not line.startswith("database"))
    assert "narratives by kind     1 narrative" in text
    assert "superseded narratives  0" in text
    for python in ("{", "}", "None", "'", "_"):  # no dict, no None, no snake_case labels
        assert python not in text, text


def test_a_table_not_on_a_terminal_is_not_cut() -> None:
    run("import", str(EXAMPLE), "--format", "openai", "--session", LONG)
    table = run("sessions")
    assert LONG in table and "…" not in table, table
    assert "2026-11-02T18:01:00Z" in table and "2026-11-02T18:06:30Z" in table
    assert max(len(line) for line in table.splitlines()) > 80


def test_columns_still_bound_a_table(monkeypatch: pytest.MonkeyPatch) -> None:
    run("import", str(EXAMPLE), "--format", "openai", "--session", LONG)
    monkeypatch.setenv("COLUMNS", "60")
    assert max(len(line) for line in run("sessions").splitlines()) <= 60
