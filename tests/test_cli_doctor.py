from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tideline.cli.main import app


def test_doctor_json_ok() -> None:
    result = CliRunner().invoke(app, ["doctor", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] and data["fts5_trigram"] and data["sqlite_vec"].startswith("v")
    assert data["embedder"] == "e5" and data["embedder_dim"] == 384


def test_doctor_fails_with_reason(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "f"
    blocker.write_text("")
    monkeypatch.setenv("TIDELINE_HOME", str(blocker / "home"))
    monkeypatch.setenv("TIDELINE_EMBEDDER", "openai")
    result = CliRunner().invoke(app, ["doctor", "--json"], catch_exceptions=False)
    assert result.exit_code == 1
    problems = json.loads(result.stdout)["problems"]
    assert any("not writable" in p for p in problems)
    assert any("TIDELINE_EMBED_URL" in p for p in problems)
