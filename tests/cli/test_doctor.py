from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.file_damage import KINDS, lexical_files, vector_files
from tideline.app import Tideline
from tideline.cli.main import app
from tideline.config import Settings
from tideline.embed import Embedder


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


def test_doctor_reports_damaged_search_files_and_repair_rebuilds_them(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, e5: Embedder
) -> None:
    """A damaged graph.usearch and tantivy file (issue 31: doctor said "all good" while every
    vector search crashed): doctor names each, exit 1; --repair deletes them and builds them
    again from the database; doctor is then content."""
    monkeypatch.setenv("TIDELINE_VECTOR_INDEX_MIN", "0")
    tide = Tideline(Settings.load(), embedder=e5)
    for n, w in enumerate(["kayak", "violin", "garden", "paris"] * 3):
        tide.memory.sync_turn("s1", "user", f"turn {n}: a day with my {w}")
    tide.memory.embed_pending()
    tide.close()
    db = isolated_home / "memory.db"
    damage = {"graph.usearch": [p for p in vector_files(db) if p.name == "graph.usearch"]}
    damage[".idx"] = [p for p in lexical_files(db) if p.suffix == ".idx"]
    for name, found in damage.items():
        assert found, name
        KINDS["random"](found[0], 5)
    result = CliRunner().invoke(app, ["doctor", "--json"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    damaged = [f for f in data["files"] if f["role"] == "search file"]
    assert len(damaged) == 2 and not any(f["ok"] for f in damaged)
    assert any("graph.usearch" in p and "--repair" in p for p in data["problems"])
    assert any(".idx" in p and "memory.db.lexical" in p for p in data["problems"])
    result = CliRunner().invoke(app, ["doctor", "--repair", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rebuilt = [r for r in data["repaired"] if r["role"] == "search file"]
    assert [r["action"] for r in rebuilt] == ["rebuilt", "rebuilt"]
    assert all("built again" in r["notes"][0] for r in rebuilt)
    assert data["ok"] and not [f for f in data["files"] if f["role"] == "search file"]
    assert [p for p in vector_files(db) if p.name == "graph.usearch"]  # made again
    assert [p for p in lexical_files(db) if p.suffix == ".idx"]
