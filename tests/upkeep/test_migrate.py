"""`tideline migrate`: an agent's SQLite memory into a PostgreSQL namespace and back, vectors
included, resumed after an interruption, checked by counts and SHA-256s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tideline.app import Tideline, turn_policy
from tideline.cli.main import app as cli
from tideline.clock import system_clock
from tideline.config import DEFAULTS, Settings
from tideline.embed import Embedder
from tideline.memory import NewTurn, RawContext
from tideline.search import Scope, retrieve
from tideline.store import Namespace, Storage, open_database, open_postgres
from tideline.upkeep import AGENT_SETS, migrate

runner = CliRunner()


class Interrupted(Exception):
    """Stands for a kill in the middle of a copy."""


def _fill(app: Tideline) -> None:
    memory = app.memory
    ids = [
        memory.sync_turn("trip", "user", f"Day {i}: we walked along the river in Porto").id
        for i in range(30)
    ]
    memory.sync_turn("cook", "user", "我喜欢在周末做饭", speaker="Li")
    old = memory.write(gesture="The user visited Porto", tags=["travel"], source_links=ids[:2])
    memory.write(gesture="The user lived in Porto for a month", tags=["travel"], supersedes=old.id)
    gone = memory.write(gesture="A secret to forget", tags=["secret"])
    memory.forget(narratives=[gone.id], why="asked to", confirm=True)
    memory.write(gesture="The user cooks Chinese food on weekends", tags=["food"])


def test_migrate_there_resume_and_back(app: Tideline, pg_url: str, e5: Embedder) -> None:
    _fill(app)
    sqlite_hits = [h.text for h in app.memory.search("Porto river walk", k=5).hits]
    path = str(app.settings.db_path)
    app.close()
    namespace = Namespace("moved")

    lines: list[str] = []

    def stop_midway(line: str) -> None:
        lines.append(line)
        if line.startswith("turns:"):
            raise Interrupted(line)

    with pytest.raises(Interrupted):
        migrate(pg_url, path, namespace, progress=stop_midway, batch=10)

    env = {"TIDELINE_HOME": str(Path(path).parent), "AGENT_NAME": "moved"}
    result = runner.invoke(cli, ["migrate", "--to", pg_url, "--from", path, "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and report["target"].endswith("(namespace tideline:moved)")
    tables = {t["table"]: t for t in report["tables"]}
    assert tables["turns"]["source_rows"] == tables["turns"]["target_rows"] == 31
    assert tables["turns"]["copied"] == 21  # the interrupted run's first batch was kept
    assert tables["narratives"]["source_sha256"] == tables["narratives"]["target_sha256"]
    vectors = {i["index"]: i for i in report["indexes"]}
    assert vectors["turn_text"]["target_vectors"] == 31 and vectors["turn_text"]["ok"]
    assert "turns: 31/31 rows" in result.stderr  # progress on stderr

    moved = Tideline(
        Settings.load(overrides={"database_url": pg_url, "agent_name": "moved"}), embedder=e5
    )
    try:
        assert [h.text for h in moved.memory.search("Porto river walk", k=5).hits] == sqlite_hits
        assert moved.memory.stats()["turns"] == 31
        new = moved.memory.sync_turn("trip", "user", "A new turn after the move")
        assert new.created and new.id == 32  # ids continue after the copied ones
        moved.memory.raw.forget_turns([new.id], why="keep the digests equal")
    finally:
        moved.close()

    again = runner.invoke(cli, ["migrate", "--to", pg_url, "--from", path, "--json"], env=env)
    assert json.loads(again.stdout)["ok"] is False  # the target has a turn the source lacks

    back = Path(path).with_name("back.db")
    result = runner.invoke(cli, ["migrate", "--to", str(back), "--from", pg_url], env=env)
    assert result.exit_code == 0, result.stderr
    assert "both ends agree" in result.stdout


def test_moved_turns_keep_their_neighbours_words(tmp_path: Path, pg_url: str) -> None:
    """A turn is found by its neighbours' words on both ends (its lexical key), not only by
    its own: "Yeah, I painted that" answers a question about the lake."""

    def lexical(db: Storage) -> list[int]:
        hits = retrieve(
            Scope(RawContext(db, clock=system_clock).index),
            "lake",
            None,
            10,
            "lex",
            turn_policy(DEFAULTS),
        ).top(10)
        return sorted(h.id for h in hits)

    path = tmp_path / "memory.db"
    with open_database(path, *AGENT_SETS) as db:
        RawContext(db, clock=system_clock).add_turns(
            "s", [NewTurn("user", "I saw the lake at sunrise"), NewTurn("user", "I painted that")]
        )
        assert lexical(db) == [1, 2]
    assert migrate(pg_url, str(path), Namespace("keys")).ok
    pg = open_postgres(pg_url, Namespace("keys"), *AGENT_SETS)
    try:
        assert lexical(pg) == [1, 2]
    finally:
        pg.close()


def test_migrate_refuses_two_files_or_nothing(tmp_path: Path) -> None:
    result = runner.invoke(cli, ["migrate", "--to", str(tmp_path / "a.db"), "--from", "x.db"])
    assert result.exit_code == 2 and "between SQLite and PostgreSQL" in result.stderr
    result = runner.invoke(cli, ["migrate", "--to", "postgresql://h/db", "--from", "none.db"])
    assert result.exit_code == 2 and "no agent database at none.db" in result.stderr
