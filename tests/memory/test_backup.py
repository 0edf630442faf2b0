"""Export → import into a fresh home gives the same memory: the same search results (ids, texts,
scores, weights), the same traces, the same tombstones and corrections; restoring twice adds
nothing; markdown renders the same records to read."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import Embedder
from tideline.profile import EventDraft, FactDraft, ObservationDraft, PersonMention

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

DATA = Path(__file__).resolve().parents[1] / "data"
QUERIES = (
    "Kyoto autumn leaves",
    "sourdough starter smells",
    "marathon training long run",
    "sister's new job",
    "where does the user live",
    "hotel near Gion",
)


@pytest.fixture
def fresh(tmp_path: Path, e5: Embedder) -> Iterator[Tideline]:
    # another home, and on PostgreSQL another namespace (the user is ignored on SQLite)
    fresh = {"home": str(tmp_path / "fresh"), "database_user": f"fresh-{tmp_path.name}"[:40]}
    app = Tideline(Settings.load(overrides=fresh), embedder=e5)
    yield app
    app.close()


def fill(app: Tideline) -> None:
    """A memory with a bit of everything: two exports, linked narratives, a correction,
    a forgotten turn and narrative, and a profile fact."""
    m = app.memory
    m.import_file(DATA / "chatgpt" / "conversations.json")
    m.import_file(DATA / "claude" / "conversations.json")
    m.sync_turn(
        "chat-1", "user", "I live in Lisbon", speaker="Mia", timestamp="2026-01-02T10:00:00Z"
    )
    lisbon = m.sync_turn("chat-1", "user", "Actually I moved to Porto", speaker="Mia").id
    kyoto = m.search("Kyoto November", include_turns=True, mode="lex").hits
    turn_ids = [h.id for h in kyoto if h.type == "turn"][:2]
    m.write(gesture="Mia plans a Kyoto trip in November", tags=["travel"], source_links=turn_ids)
    old = m.write(gesture="Mia lives in Lisbon", tags=["home"], importance=4)
    m.write(
        gesture="Mia lives in Porto now",
        tags=["home"],
        importance=4,
        supersedes=old.id,
        source_links=[lisbon],
    )
    secret = m.write(gesture="Mia's bank PIN hint", tags=["private"])
    m.forget(narratives=[secret.id], why="private", confirm=True)
    m.forget(query="nail polish", why="embarrassing", confirm=True)
    cs = app.profile.read().changeset()
    cs.add_fact(FactDraft("user", "city", "Porto"), turn_ids=(lisbon,))
    app.profile.apply(cs)


def results(app: Tideline) -> list[list[dict[str, Any]]]:
    return [
        [h.to_dict() for h in app.memory.search(q, k=8, include_turns=True, mode=mode).hits]
        for q in QUERIES
        for mode in ("hybrid", "lex", "vec")
    ]


def memory_lines(
    text: str, kinds: tuple[str, ...] = ("session", "turn", "narrative")
) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in text.splitlines()]
    return [r for r in records if r["type"] in kinds]


def test_export_then_import_into_a_fresh_home_gives_identical_search_results(
    app: Tideline, fresh: Tideline, tmp_path: Path
) -> None:
    fill(app)
    backup = tmp_path / "backup.jsonl"
    with backup.open("w") as fh:
        counts = app.export(fh, "jsonl")
    assert counts["narrative"] == 4 and counts["fact"] == 1 and counts["session"] == 5
    header = json.loads(backup.read_text().splitlines()[0])
    assert (header["type"], header["version"], header["counts"]) == ("tideline-export", 2, counts)
    assert set(header["schema"]) == {"agent", "analysis", "profile"}
    assert header["valid_time"]["from"] < header["valid_time"]["to"]
    kinds = [json.loads(line)["type"] for line in backup.read_text().splitlines()[1:]]
    assert list(dict.fromkeys(kinds)) == list(counts)  # grouped by kind, in the listed order

    summary = fresh.memory.import_file(backup)
    assert (summary.format, summary.detected, summary.problems) == ("tideline", True, [])
    assert (summary.narratives_added, summary.facts_added) == (4, 1)
    assert summary.skipped_kinds == {}

    assert results(fresh) == results(app)
    for nid in range(1, 5):
        assert fresh.memory.trace(nid).to_dict() == app.memory.trace(nid).to_dict()
    before = {k: v for k, v in app.memory.stats().items() if k != "database"}
    assert {k: v for k, v in fresh.memory.stats().items() if k != "database"} == before
    again = io.StringIO()
    fresh.export(again, "jsonl")
    assert memory_lines(again.getvalue()) == memory_lines(backup.read_text())
    facts = [r for r in memory_lines(again.getvalue(), ("fact",))]
    assert facts == memory_lines(backup.read_text(), ("fact",))  # evidence, timeline, clocks
    assert facts[0]["evidence"][0]["turn"] and facts[0]["changes"]

    twice = fresh.memory.import_file(backup, "tideline")
    assert (twice.turns_added, twice.narratives_added, twice.facts_added) == (0, 0, 0)
    assert (twice.narratives_existing, twice.facts_existing) == (4, 1)
    assert results(fresh) == results(app)


def test_markdown_export_reads_as_a_document(app: Tideline) -> None:
    fill(app)
    out = io.StringIO()
    app.export(out, "markdown")
    text = out.getvalue()
    assert text.startswith("# Tideline export of agent (")
    assert "## Session chatgpt/6650f1a2-0c1e-8001-9a1b-kyoto0000001 — Kyoto trip in autumn" in text
    assert "Mia lives in Lisbon" in text and "superseded by #3" in text
    assert "[forgotten" in text and "nail polish" not in text and "PIN" not in text
    assert "## Facts" in text


def test_a_cut_short_backup_is_restored_as_far_as_it_goes_and_says_so(
    app: Tideline, fresh: Tideline, tmp_path: Path
) -> None:
    app.memory.import_file(DATA / "claude" / "conversations.json")
    whole = io.StringIO()
    app.export(whole, "jsonl")
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(whole.getvalue().splitlines(keepends=True)[:-2]))
    s = fresh.memory.import_file(cut)
    assert s.turns_added == 4
    assert [p.message.split(" (")[0] for p in s.problems] == [
        "cut.jsonl does not hold what its first line lists"
    ]
    assert "6 turn listed, 4 found" in s.problems[0].message


def test_facts_come_back_with_their_corrections_and_a_broken_one_is_named(
    app: Tideline, fresh: Tideline, tmp_path: Path
) -> None:
    m = app.memory
    lisbon = m.sync_turn("c", "user", "I live in Lisbon", timestamp="2025-01-05T10:00:00Z").id
    porto = m.sync_turn("c", "user", "I moved to Porto", timestamp="2025-06-01T10:00:00Z").id
    cs = app.profile.read().changeset()
    old = cs.add_fact(FactDraft("user", "city", "Lisbon"), turn_ids=(lisbon,))
    new = cs.add_fact(FactDraft("user", "city", "Porto"), turn_ids=(porto,), supersedes=old)
    job = cs.add_fact(FactDraft("user", "job", "nurse in Porto"), turn_ids=(porto,))
    cs.add_edge("related_to", new, job)
    cs.add_event(EventDraft("Moved to Porto", valid_from="2025-06-01T10:00:00Z"))
    cs.mention(PersonMention("Lena", "sister", said_at="2025-06-01T10:00:00Z"))
    said = cs.add_observation(ObservationDraft("Works nights", turn_ids=(porto,)))
    cs.support(job, observation=said)
    cs.add_strategy("verify", job, "Still working nights?")
    ids = app.profile.apply(cs).ids
    first = ids[old]
    cs = app.profile.read().changeset()
    cs.set_user_model("pace", "steady", (ids[job],))
    cs.set_trajectory(phase="settling in", anchors=[ids[new]])
    app.profile.apply(cs)
    app.profile.close(first, why="moved", at="2025-06-01T10:00:00Z")
    out = io.StringIO()
    app.export(out, "jsonl")
    lines = out.getvalue().splitlines()
    broken = json.loads(next(line for line in lines if '"type": "fact"' in line))
    broken |= {"value": "Faro", "status": "gone"}
    backup = tmp_path / "backup.jsonl"
    backup.write_text("\n".join([*lines, json.dumps(broken)]) + "\n")

    s = fresh.memory.import_file(backup)
    assert (s.facts_added, s.facts_existing) == (3, 0)
    assert s.skipped_kinds == {"snapshot records (rebuilt from the restored facts)": 1}
    restored_kinds = ("edge", "event", "observation", "relationship", "strategy", "trajectory")
    assert s.profile_added == dict.fromkeys(restored_kinds, 1) | {"user_model": 1}
    assert [p.message.split(":")[0] for p in s.problems] == [
        f"{backup.name} does not hold what its first line lists (3 fact listed, 4 found)",
        "fact #1",  # the broken copy, named by its id in the file and its line
    ]
    assert "status='gone'" in s.problems[1].message and s.problems[1].line == len(lines) + 1
    restored = io.StringIO()
    fresh.export(restored, "jsonl")
    kinds = ("fact", *restored_kinds, "user_model")  # the snapshot is rebuilt, not copied
    assert memory_lines(restored.getvalue(), kinds) == memory_lines(out.getvalue(), kinds)
    again = fresh.memory.import_file(backup)
    assert (again.facts_added, again.profile_added, again.profile_existing) == (
        0,
        {},
        dict.fromkeys(restored_kinds, 1) | {"user_model": 1},
    )
    porto_fact = fresh.profile.facts(status="suspected")[0]
    assert (porto_fact.value, porto_fact.supersedes) == ("Porto", first)
    restored_line, original = fresh.profile.timeline(first), app.profile.timeline(first)
    assert (restored_line.fact, restored_line.chain) == (original.fact, original.chain)
    key = lambda c: (c.fact_id, c.at, c.to_status)  # noqa: E731 - ties in time may swap
    assert sorted(restored_line.changes, key=key) == sorted(original.changes, key=key)
