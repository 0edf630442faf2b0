"""`scripts all` on a realistic memory: LoCoMo conv-26 observations written as narratives."""

from __future__ import annotations

import pytest

from tests.analysis.test_locomo_topics import observations
from tideline.analysis.attention import heatmap, log_hits
from tideline.analysis.scripts import run_all
from tideline.app import memory_policies
from tideline.clock import system_clock
from tideline.config import DEFAULTS
from tideline.memory import Memory
from tideline.store import Database

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def test_locomo_observations_through_every_script(memory: Memory, db: Database) -> None:
    docs, speakers = observations("conv-26")
    # write fast, then embed in batches
    lexical = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    for _, text in docs:
        speaker = next((s for s in speakers if s in text), speakers[0])
        lexical.write(gesture=text[:500], tags=[speaker], entities_role=f"{speaker}=speaker")
    assert memory.embed_pending() == len(docs)
    first = run_all(memory)
    keys = {r[0] for r in db.execute("SELECT keyword FROM topic_clusters")}
    assert {"paint", "adopt", "lgbtq"} <= keys
    assert first.steps["clusters"]["clustered"] == len(docs)
    assert first.steps["graph"]["entities"] == 2 and not first.steps["graph"]["malformed"]
    labels = [r[0] for r in db.execute("SELECT label FROM emb_clusters")]
    assert any("paint" in label.lower() for label in labels), labels
    hits = memory.search("painting a sunset", k=5).hits
    logged = log_hits(memory, hits, query="painting a sunset")
    heat = heatmap(memory)
    assert logged == len(hits) >= 1 and heat.total_hits == logged and heat.deserts
    assert not run_all(memory).changed
