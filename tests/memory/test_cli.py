"""The CLI mirrors of the memory tools: JSON output, errors on stderr, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tideline.cli.main import app

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_import_write_search_trace_sessions_stats(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(
        '{"role": "user", "content": "My sister Anna lives in Porto", "timestamp": "2026-11-01T10:00:00Z"}\n'
        "{not json\n"
        '{"role": "assistant", "content": "Porto is lovely in spring", "timestamp": "2026-11-01T10:00:05Z"}\n'
    )
    code, out, err = run("import", str(chat), "--format", "openai", "--json")
    summary = json.loads(out)
    assert code == 1 and summary["turns_added"] == 2  # broken line reported, the rest imported
    assert err == ""  # with --json the report is in the JSON, stdout only
    assert summary["problems"] == [{"line": 2, "message": summary["problems"][0]["message"]}]
    assert run("import", str(chat), "-f", "openai", "--json")[0] == 1  # still the broken line
    assert json.loads(run("import", str(chat), "-f", "openai", "--json")[1])["turns_added"] == 0

    turn_id = json.loads(run("search", "Anna Porto", "--turns", "--json")[1])["hits"][0]["id"]
    code, out, _ = run(
        "write",
        "The user's sister Anna lives in Porto",
        "--tag",
        "family",
        "--link",
        str(turn_id),
        "--importance",
        "4",
        "--json",
    )
    narrative = json.loads(out)
    assert code == 0 and narrative["source_links"] == [turn_id] and narrative["tags"] == ["family"]

    hits = json.loads(run("search", "where does Anna live", "--json")[1])["hits"]
    assert hits[0]["id"] == narrative["id"] and hits[0]["type"] == "narrative"
    trace = json.loads(run("trace", str(narrative["id"]), "--json")[1])
    assert [t["source"] for t in trace["windows"][0]] == [True, False]
    sessions = json.loads(run("sessions", "--json")[1])
    assert [s["key"] for s in sessions] == ["openai/chat"] and sessions[0]["turns"] == 2
    stats = json.loads(run("stats", "--json")[1])
    assert (stats["turns"], stats["narratives"], stats["turn_vectors"]) == (2, 1, 2)


def test_errors_are_one_line_on_stderr_with_exit_codes() -> None:
    code, out, err = run("write", "linked to nothing", "--link", "777")
    assert code == 2 and out == "" and "turn 777 does not exist" in err
    code, _, err = run("trace", "12345")
    assert code == 2 and "narrative 12345 does not exist" in err
    code, _, err = run("search", "x", "--mode", "fuzzy")  # the choices come from tideline.fields
    assert code == 2 and "'fuzzy' is not one of 'hybrid'" in " ".join(err.replace("│", "").split())
    code, _, err = run("import", "/nonexistent/file.json", "-f", "openai")
    assert code == 2 and "is not a file" in err
    assert run("search", "nothing stored yet")[0] == 1  # no hits
