"""`tideline doctor [--repair]` on a PostgreSQL namespace: the server, pgvector, the schema, its
migrations and indexes, row counts and rows without a vector; missing indexes and vectors built
again; and one line for a server that is down, a login it refuses and a URL that is not one."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.memory import AGENT_MIGRATIONS, NARRATIVE_INDEX, TURN_INDEX
from tideline.store import Namespace


def doctor(*args: str) -> tuple[int, Any, str]:
    done = CliRunner().invoke(cli, ["doctor", "--json", *args], catch_exceptions=False)
    return done.exit_code, json.loads(done.stdout), done.stderr


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_doctor_checks_a_namespace_and_repair_builds_what_is_missing(
    app: Tideline, pg_url: str
) -> None:
    turn = app.memory.sync_turn("s", "user", "The heron nests behind the boat shed")
    app.memory.write(gesture="A heron nests by the shed", source_links=[turn.id])
    schema = Namespace(app.settings.agent_name, app.settings.database_user).schema
    app.close()

    code, healthy, _ = doctor()
    assert code == 0, healthy["problems"]
    assert healthy["postgresql"].startswith("16") and healthy["pgvector"]
    assert healthy["namespace"] == schema and healthy["schema"] is True
    applied = {name: steps.partition("/") for name, steps in healthy["migrations"].items()}
    assert all(int(done) <= int(latest) for done, _, latest in applied.values())
    assert applied[AGENT_MIGRATIONS.name][0] == applied[AGENT_MIGRATIONS.name][2]
    assert healthy["rows"]["turns"] == 1 and healthy["rows"]["narratives"] == 1
    assert healthy["vectors_pending"] == 0
    assert set(healthy["indexes"].values()) == {"gin", "hnsw"}

    gin, hnsw = f"{TURN_INDEX}_text_tsv", f"{NARRATIVE_INDEX}_vec_ann"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP INDEX "{schema}".{gin}')
        conn.execute(f'DROP INDEX "{schema}".{hnsw}')
        conn.execute(f'DELETE FROM "{schema}".{TURN_INDEX}_vec')

    code, broken, _ = doctor()
    assert code == 1
    assert broken["indexes"][gin] == "missing" and broken["indexes"][hnsw] == "missing"
    assert any(gin in p and "--repair" in p for p in broken["problems"])
    assert any(hnsw in p for p in broken["problems"])
    assert broken["vectors_pending"] == 1

    code, repaired, _ = doctor("--repair")
    assert code == 0, repaired["problems"]
    [done] = repaired["repaired"]
    assert done["action"] == "rebuilt" and schema in done["path"]
    assert f"index {gin} built" in done["notes"] and f"index {hnsw} built" in done["notes"]
    assert "1 missing vectors embedded" in done["notes"]
    assert repaired["vectors_pending"] == 0 and set(repaired["indexes"].values()) == {"gin", "hnsw"}


@pytest.mark.parametrize(
    ("url", "fix"),
    [
        ("postgresql://tideline:secret@127.0.0.1:1/memories", "that the server is running"),
        ("postgresql://[::1/memories", "fix TIDELINE_DATABASE_URL"),
        ("NO_SUCH_ROLE", "check the user and password"),
    ],
)
def test_a_server_down_a_refused_login_and_a_bad_url_are_one_line(
    url: str, fix: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if url == "NO_SUCH_ROLE":
        url = pg_url.replace("postgresql://postgres:", "postgresql://nobody:", 1)
    monkeypatch.setenv("TIDELINE_DATABASE_URL", url)
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    code, report, _ = doctor()
    assert code == 1 and not report["ok"]
    [problem] = report["problems"]
    assert problem.startswith("cannot connect to PostgreSQL at ") and fix in problem
    assert "secret" not in problem  # the password is never shown

    done = CliRunner().invoke(cli, ["doctor"], catch_exceptions=False)
    assert done.exit_code == 1
    assert [line for line in done.stderr.splitlines() if line] == [f"problem: {problem}"]
