"""The script layer on a real agent database: planted topics, roles, gaps, deserts, idempotence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from tideline.analysis.attention import heatmap, log_hits
from tideline.analysis.backfill import backfill_source_links
from tideline.analysis.cluster_routing import (
    cluster_narratives,
    rebuild_clusters,
    route_clusters,
)
from tideline.analysis.scanner import scan_unindexed
from tideline.analysis.scripts import rebuild_entity_graph, rebuild_topics, run_all
from tideline.app import Tideline, memory_policies
from tideline.cli.main import app as cli
from tideline.clock import system_clock
from tideline.config import DEFAULTS, Settings
from tideline.memory import Memory
from tideline.store import Database

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

THEMES = {
    "garden": [
        "I planted tomatoes in the garden and watered them at dawn",
        "Slugs ate the lettuce in my garden overnight",
        "We built a raised garden bed from old pallets",
        "The garden roses finally bloomed after the rain",
        "I spent the afternoon weeding the garden and pruning the hedge",
        "Compost from the kitchen went into the garden soil",
    ],
    "violin": [
        "Practised scales on the violin for an hour before dinner",
        "My violin teacher said my bowing is getting smoother",
        "Restrung the violin with new strings before the concert",
        "Played a Bach partita on the violin at the recital",
        "The violin bridge cracked and needs a luthier",
        "Recorded myself playing violin to hear my intonation",
    ],
    "mortgage": [
        "The bank approved our mortgage application today",
        "We compared mortgage rates from three lenders",
        "Paying off the mortgage early would save a lot of interest",
        "The mortgage broker asked for two years of payslips",
        "Refinancing the mortgage lowered the monthly payment",
        "Worried about the mortgage after the interest rate rise",
    ],
}
FILLERS = [
    "Cooked a spicy curry with lentils",
    "Watched a documentary about octopuses",
    "Missed the train and walked home in the snow",
    "The cat knocked a glass off the shelf",
    "Read a novel about a lighthouse keeper",
    "Fixed a squeaky door hinge with oil",
    "Went swimming at the lake with friends",
    "The laptop fan is making a grinding noise",
    "Tried a new bakery that sells rye bread",
    "Painted the bathroom ceiling pale blue",
    "Lost my umbrella at the museum",
    "Learned three new chess openings",
]
TABLES = {
    "narratives": "SELECT id, recurrence, weight, updated_at FROM narratives ORDER BY id",
    "topic_clusters": "SELECT * FROM topic_clusters ORDER BY id",
    "topic_members": "SELECT * FROM topic_members ORDER BY 1, 2",
    "emb_clusters": "SELECT * FROM emb_clusters ORDER BY id",
    "emb_cluster_members": "SELECT * FROM emb_cluster_members ORDER BY 1, 2",
    "emb_cluster_adjacency": "SELECT * FROM emb_cluster_adjacency ORDER BY 1, 2",
    "entity_roles": "SELECT * FROM entity_roles ORDER BY 1, 2",
    "entity_pairs": "SELECT * FROM entity_pairs ORDER BY 1, 2",
    "narrative_links": "SELECT * FROM narrative_links ORDER BY 1, 2",
}


def snapshot(db: Database) -> dict[str, list[tuple[object, ...]]]:
    return {name: [tuple(r) for r in db.execute(sql)] for name, sql in TABLES.items()}


def without_build_times(
    snap: dict[str, list[tuple[object, ...]]],
) -> dict[str, list[tuple[object, ...]]]:
    """A snapshot minus `topic_clusters.built_at`, for rebuilds that do write (the clock moves)."""
    return {**snap, "topic_clusters": [row[:-1] for row in snap["topic_clusters"]]}


def plant(memory: Memory) -> dict[str, set[int]]:
    """30 narratives: three themes of 6 (with a theme tag), 12 fillers; Anna reviews Ben's work."""
    ids: dict[str, set[int]] = {}
    day = 1
    for theme, texts in THEMES.items():
        for i, text in enumerate(texts):
            role = "Anna=review; Ben=build" if theme == "violin" and i < 4 else ""
            n = memory.write(
                gesture=text,
                tags=[theme],
                entities_role=role,
                importance=4,
                created_at=f"2026-01-{day:02d}",
            )
            ids.setdefault(theme, set()).add(n.id)
            day += 1
    for text in FILLERS:
        memory.write(gesture=text, created_at=f"2026-01-{day:02d}")
        day += 1
    return ids


def test_scripts_all_on_planted_corpus_then_nothing_changes(memory: Memory, db: Database) -> None:
    planted = plant(memory)
    first = run_all(memory)
    topics = {r["keyword"]: r["id"] for r in db.rows("SELECT id, keyword FROM topic_clusters")}
    for theme, members in planted.items():
        key = {"mortgage": "mortgag"}.get(theme, theme)  # Snowball stems
        assert key in topics, sorted(topics)
        found = {
            r[0]
            for r in db.execute(
                "SELECT narrative_id FROM topic_members WHERE topic_id = ?", (topics[key],)
            )
        }
        assert found == members
    assert first.steps["topics"]["changed"] and set(planted) <= set(first.steps["topics"]["added"])
    # recurrence was 1 for the first narrative of each theme at write time; now all share a tag
    assert first.steps["weights"]["recurrence_changed"] > 0
    rec = dict(db.execute("SELECT id, recurrence FROM narratives").fetchall())
    assert {rec[i] for m in planted.values() for i in m} == {4}  # 5 others share the tag
    # soft clusters: every narrative has a vector; the garden narratives mostly share a cluster
    clusters = first.steps["clusters"]
    assert clusters["clustered"] == 30 and clusters["skipped_no_vector"] == 0
    assert clusters["model_id"] == memory.embedder.model_id  # type: ignore[union-attr]
    nearest = dict(
        db.execute(
            "SELECT narrative_id, cluster_id FROM emb_cluster_members WHERE rank = 1"
        ).fetchall()
    )
    garden_clusters = [nearest[i] for i in planted["garden"]]
    main = max(set(garden_clusters), key=garden_clusters.count)
    assert garden_clusters.count(main) >= 4
    label = db.scalar("SELECT label FROM emb_clusters WHERE id = ?", (main,))
    assert "garden" in label
    # entity graph: Anna always reviews, Ben always builds, together 4 times
    roles = db.rows("SELECT entity, role, memories, stable FROM entity_roles ORDER BY entity")
    assert roles == [
        {"entity": "Anna", "role": "review", "memories": 4, "stable": 1},
        {"entity": "Ben", "role": "build", "memories": 4, "stable": 1},
    ]
    assert db.rows("SELECT a, b, memories FROM entity_pairs") == [
        {"a": "Anna", "b": "Ben", "memories": 4}
    ]
    assert db.scalar("SELECT count(*) FROM runs WHERE status = 'ok'") == 5

    before = snapshot(db)
    second = run_all(memory)
    assert snapshot(db) == before
    assert not second.changed
    assert second.steps["weights"]["weights_changed"] == 0


def test_heatmap_lights_the_retrieved_theme_and_shows_deserts(memory: Memory, db: Database) -> None:
    planted = plant(memory)
    run_all(memory, steps=["topics", "clusters"])
    for query in ("watering the tomatoes", "weeding the garden beds"):
        hits = memory.search(query, k=3, min_score=0).hits  # the theme's three, however near
        assert log_hits(memory, hits, query=query) == 3
    garden = sorted(planted["garden"])
    log_hits(memory, [(garden[0], 0.9)], at="2020-01-01")
    heat = heatmap(memory, since="2026-01-01")
    assert heat.total_hits == 6 and heat.unclustered_hits == 0
    assert sum(c.hits for c in heat.clusters) == 6
    lit = {c.cluster_id for c in heat.clusters}
    assert any("garden" in c.label for c in heat.clusters)
    all_clusters = {r[0] for r in db.execute("SELECT id FROM emb_clusters")}
    assert {c.cluster_id for c in heat.deserts} == all_clusters - lit
    assert any("violin" in c.label or "mortgage" in c.label for c in heat.deserts)
    assert heatmap(memory).total_hits == 7
    # routing: the garden query lands in a lit cluster; widening adds neighbours, never repeats
    qvec = memory.embedder.embed_query("tomatoes in the garden")  # type: ignore[union-attr]
    routed = route_clusters(memory, qvec, top_m=1, wide=False)
    assert routed[0] in lit
    wide = route_clusters(memory, qvec, top_m=1, wide=True)
    assert wide[0] == routed[0] and len(wide) == len(set(wide))
    assert set(planted["garden"]) & set(cluster_narratives(memory, routed))


def test_degenerate_memories_never_crash(settings: Settings) -> None:
    app = Tideline(settings)
    try:
        db = app.db
        # no embedder: narratives without vectors
        lexical_only = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
        empty = run_all(lexical_only)
        assert empty.narratives == 0 and empty.steps["clusters"]["k"] == 0
        assert "tideline embed" in empty.steps["clusters"]["note"]
        one = lexical_only.write(gesture="Only one memory", tags=["same"])
        assert run_all(lexical_only).steps["topics"]["topics"] == 0
        for i in range(11):
            lexical_only.write(gesture=f"Memory number {i} about nothing", tags=["Same"])
        # malformed entities_role slipped in by hand (the write path would refuse it)
        db.execute(
            "UPDATE narratives SET entities_role = 'Anna=lead; broken part; =x' WHERE id = ?",
            (one.id,),
        )
        report = run_all(lexical_only)
        rec = {r[0] for r in db.execute("SELECT recurrence FROM narratives")}
        assert rec == {5}  # everyone shares 'same' with 11 others
        assert report.steps["clusters"]["skipped_no_vector"] == 12
        bad = report.steps["graph"]["malformed"]
        assert [b["narrative_id"] for b in bad] == [one.id, one.id]
        assert db.rows("SELECT entity, role FROM entity_roles") == [
            {"entity": "Anna", "role": "lead"}
        ]
    finally:
        app.close()


def test_narratives_without_vectors_are_skipped_and_counted(memory: Memory, db: Database) -> None:
    plant(memory)
    db.execute("DELETE FROM narrative_text_vec WHERE rowid IN (1, 2, 3)")
    report = rebuild_clusters(memory)
    assert report.clustered == 27 and report.skipped_no_vector == 3
    assert db.scalar("SELECT count(DISTINCT narrative_id) FROM emb_cluster_members") == 27


def test_scanner_finds_unlinked_narratives_and_chunks_by_gap(memory: Memory, db: Database) -> None:
    linked_turn = memory.sync_turn("s1", "user", "Old chat", timestamp="2026-01-01T09:00:00Z")
    memory.write(
        gesture="Old and linked", source_links=[linked_turn.id], created_at="2026-01-01T10:00:00Z"
    )
    lonely = memory.write(gesture="Written without links", created_at="2026-01-02T10:00:00Z")
    early = [
        memory.sync_turn("s1", "user", f"morning {i}", timestamp=f"2026-02-01T09:0{i}:00Z").id
        for i in range(3)
    ]
    late = [
        memory.sync_turn("s1", "assistant", f"evening {i}", timestamp=f"2026-02-01T19:0{i}:00Z").id
        for i in range(2)
    ]
    other = memory.sync_turn("s2", "user", "other session", timestamp="2026-02-01T09:01:30Z").id
    scan = scan_unindexed(memory)
    assert scan.cutoff is None  # each session from its last linked turn
    assert [n["id"] for n in scan.unlinked] == [lonely.id]
    assert [[t.id for t in c.turns] for c in scan.chunks] == [early, [other], late]
    markdown = scan.to_markdown()
    assert "## Narratives without source links (1)" in markdown
    assert f"`{early[0]}`" in markdown and "Written without links" in markdown
    assert (
        len(scan_unindexed(memory, max_gap=__import__("datetime").timedelta(hours=12)).chunks) == 2
    )
    data = scan.to_dict()
    assert data["unindexed_turns"] == 6 and data["chunk_list"][1]["sessions"] == ["s2"]


def test_imported_turns_stay_unindexed_whenever_memories_were_written(memory: Memory) -> None:
    """A year of imported chats (turns of 2025) and memories written today: the turns no memory
    links to are unindexed, each session from its last linked turn (it said 0 for 437)."""
    said = [
        memory.sync_turn(
            f"openai/chat-{s}", "user", f"chat {s} line {i}", timestamp=f"2025-0{s}-01T10:0{i}:00Z"
        ).id
        for s in (1, 2)
        for i in range(4)
    ]
    memory.write(gesture="A memory written today, about something else")  # newer, no links
    assert scan_unindexed(memory).turns == 8
    memory.write(gesture="What chat 1 said up to its third line", source_links=[said[2]])
    scan = scan_unindexed(memory)
    assert [t.id for c in scan.chunks for t in c.turns] == [said[3], *said[4:]]
    assert scan.summary()["unindexed_turns"] == 5
    assert scan_unindexed(memory, after="2025-02-01T10:01:30Z").turns == 2  # said after a time


def test_backfill_links_clear_matches_and_leaves_ambiguous_ones(
    memory: Memory, db: Database
) -> None:
    turns = {
        text: memory.sync_turn("chat", "user", text, timestamp=f"2026-03-01T10:0{i}:00Z").id
        for i, text in enumerate(
            [
                "My sister Clara is moving to Lisbon in April for a new job",
                "The dishwasher broke again and flooded the kitchen floor",
                "I want to learn to play the cello next year",
                "We went to the beach",
                "We went to the beach!",
            ]
        )
    }
    clara = memory.write(gesture="Clara, my sister, moves to Lisbon in April for work")
    beach = memory.write(gesture="We went to the beach")
    dry = backfill_source_links(memory, dry_run=True)
    assert db.scalar("SELECT count(*) FROM narrative_links") == 0
    by_id = {d.narrative_id: d for d in dry.decisions}
    assert by_id[clara.id].status == "linked"
    assert (
        by_id[clara.id].turn_id
        == turns["My sister Clara is moving to Lisbon in April for a new job"]
    )
    assert by_id[beach.id].status == "ambiguous"
    report = backfill_source_links(memory)
    assert report.linked == 1 and report.ambiguous == 1
    assert db.rows("SELECT narrative_id, turn_id FROM narrative_links") == [
        {"narrative_id": clara.id, "turn_id": by_id[clara.id].turn_id}
    ]
    assert backfill_source_links(memory).examined == 1  # clara is linked now


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)  # the kill hooks apsw's trace
def test_a_killed_rebuild_leaves_the_previous_topics(
    memory: Memory, db: Database, settings: Settings
) -> None:
    plant(memory)
    rebuild_topics(memory)
    before = snapshot(db)
    db.execute("DELETE FROM topic_members")  # make the next rebuild want to write
    db.execute(
        "INSERT INTO topic_members SELECT topic_id, narrative_id FROM (SELECT 1 AS topic_id, 1 AS narrative_id)"
    )
    stored = snapshot(db)
    child = f"""
import os
from tideline.store import open_database
from tideline.memory import AGENT_MIGRATIONS, Memory
from tideline.analysis import ANALYSIS_MIGRATIONS
from tideline.analysis.scripts import rebuild_topics
from tideline.clock import system_clock
from tideline.app import memory_policies
from tideline.config import DEFAULTS

db = open_database({str(settings.db_path)!r}, AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS)
def trace(cursor, sql, bindings):
    if sql.startswith("INSERT INTO topic_members"):
        os._exit(9)  # killed inside the rebuild transaction
    return True
db.conn.exec_trace = trace
rebuild_topics(Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock))
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=120)
    assert done.returncode == 9, done.stderr.decode()
    assert snapshot(db) == stored != before
    assert rebuild_topics(memory).changed
    assert without_build_times(snapshot(db)) == without_build_times(before)


def test_cli_scripts_all_graph_scan_and_heatmap(
    memory: Memory, db: Database, tmp_path: Path
) -> None:
    plant(memory)
    runner = CliRunner()
    out = runner.invoke(cli, ["scripts", "all", "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert set(data["steps"]) == {"topics", "weights", "clusters", "graph", "scan"}
    again = runner.invoke(cli, ["scripts", "all"], catch_exceptions=False)
    assert again.exit_code == 0 and "false" in again.stdout and "true" not in again.stdout
    dot = tmp_path / "g.dot"
    graph = runner.invoke(cli, ["scripts", "graph", "--dot", str(dot)], catch_exceptions=False)
    assert graph.exit_code == 0 and "Anna = review in 4/4 memories" in graph.stdout
    assert '"Anna" -- "Ben"' in dot.read_text()
    scan = runner.invoke(cli, ["scripts", "scan"], catch_exceptions=False)
    assert (
        scan.stdout.startswith("# Unindexed context") and "without source links (30)" in scan.stdout
    )
    heat = runner.invoke(cli, ["heatmap", "--json"], catch_exceptions=False)
    assert json.loads(heat.stdout)["total_hits"] == 0
    dry = runner.invoke(cli, ["scripts", "backfill", "--dry-run"], catch_exceptions=False)
    assert "30 narratives without links" in dry.stdout


def test_mcp_heatmap_and_scan_tools(app: Tideline, memory: Memory, db: Database) -> None:
    from tideline.mcp import ToolServer, analysis_tools

    plant(memory)
    run_all(memory, steps=["topics", "clusters"])
    log_hits(memory, [(1, 0.9)])
    server = ToolServer(app, name="t")
    analysis_tools.register(server)

    async def probe() -> None:
        async with Client(server) as client:
            res = await client.call_tool("memory_attention_heatmap", {"from": "2000-01-01"})
            data = res.structured_content
            assert data["total_hits"] == 1 and data["deserts"]
            scan = (await client.call_tool("memory_scan_unindexed", {"gap": 10})).structured_content
            assert scan["unlinked_narratives"] == 30 and "# Unindexed context" in scan["markdown"]
            bad = await client.call_tool("memory_attention_heatmap", {"since": "yesterday"})
            assert bad.is_error and "ISO 8601" in bad.content[0].text

    anyio.run(probe)


def test_graph_report_names_malformed_parts(memory: Memory, db: Database) -> None:
    n = memory.write(gesture="A", entities_role="X=lead")
    db.execute("UPDATE narratives SET entities_role = 'X=lead; Y' WHERE id = ?", (n.id,))
    graph, report = rebuild_entity_graph(memory)
    assert report.malformed == [
        {"narrative_id": n.id, "part": "Y", "reason": "no '=' between entity and roles"}
    ]
    assert report.entities == 1 and graph.entity_memories["X"] == 1
