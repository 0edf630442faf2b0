"""The script layer's tables moved from agent#2 to their own set, analysis#1: old databases open
with their rows, new ones get the tables from analysis#1."""

from __future__ import annotations

from pathlib import Path

from tideline.analysis import ANALYSIS_MIGRATIONS, ScriptTables
from tideline.app import memory_policies
from tideline.clock import system_clock
from tideline.config import DEFAULTS
from tideline.memory import AGENT_MIGRATIONS, Memory
from tideline.store import open_database


def _applied(path: Path) -> list[tuple[str, int]]:
    with open_database(path) as db:
        return [tuple(r) for r in db.execute("SELECT name, number FROM _migrations ORDER BY 1, 2")]


def test_an_old_database_keeps_its_script_tables_and_records_analysis_1(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with open_database(path, AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS) as db:
        nid = (
            Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
            .write(gesture="The tide came in early")
            .id
        )
        tables = ScriptTables(db, clock=system_clock)
        tables.replace_topics(
            [(1, "tide", "tide", 1, '["tide"]')], [(1, nid)], "2026-01-01T00:00:00Z"
        )
        tables.log_attention([(nid, None, 0.9, "tide", "prefetch", "2026-01-02T00:00:00Z")])
        with tables.record_run("topics"):
            pass
        # What a database written before analysis#1 existed looks like: agent#2 made the tables.
        db.execute("DELETE FROM _migrations WHERE name = 'analysis'")
    assert _applied(path) == [("agent", n) for n in range(1, 6)]

    with open_database(path, AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS) as db:
        memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
        tables = ScriptTables(db, clock=system_clock)
        assert tables.topics() == [(1, "tide", "tide", 1, '["tide"]')]
        assert tables.topic_members() == [(1, nid)]
        assert tables.attention(None, None)[0] == 1
        assert db.scalar("SELECT status FROM runs") == "ok"
        assert memory.narratives.get([nid])[0].gesture == "The tide came in early"
    assert _applied(path) == [
        ("agent", 1),
        ("agent", 2),
        ("agent", 3),
        ("agent", 4),
        ("agent", 5),
        ("analysis", 1),
    ]


def test_a_new_database_gets_the_script_tables_from_analysis_1(tmp_path: Path) -> None:
    with open_database(tmp_path / "agent-only.db", AGENT_MIGRATIONS) as db:
        assert not db.table_exists("topic_clusters")  # agent#2 creates nothing now
    with open_database(tmp_path / "memory.db", AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS) as db:
        assert all(
            db.table_exists(t)
            for t in ("topic_clusters", "emb_clusters", "attention_log", "entity_roles", "runs")
        )
