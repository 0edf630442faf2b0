"""Attention log and heatmap, and the prefetch pool, on a real agent database."""

from __future__ import annotations

import pytest

from tideline.analysis.attention import heatmap, log_hits
from tideline.analysis.prefetch import prefetch_pool
from tideline.errors import InvalidInput
from tideline.memory import Memory
from tideline.store import Database

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def test_log_hits_before_clusters_exist(memory: Memory, db: Database) -> None:
    a = memory.write(gesture="We fixed the flaky deploy script", tags=["deploy"])
    result = memory.search("deploy script", k=3)
    assert log_hits(memory, result.hits, query="deploy script") == 1
    assert (
        log_hits(memory, [(a.id, 0.9), (999_999, 0.5)], source="manual") == 1
    )  # unknown id skipped
    assert log_hits(memory, []) == 0
    rows = db.rows("SELECT narrative_id, cluster_id, query, source FROM attention_log ORDER BY id")
    assert rows == [
        {"narrative_id": a.id, "cluster_id": None, "query": "deploy script", "source": "prefetch"},
        {"narrative_id": a.id, "cluster_id": None, "query": "", "source": "manual"},
    ]
    heat = heatmap(memory)
    assert heat.total_hits == 2 and heat.unclustered_hits == 2
    assert "tideline scripts clusters" in heat.note


def test_prefetch_pool_orders_by_band_recurrence_then_recency(memory: Memory, db: Database) -> None:
    light = memory.write(gesture="Light", importance=1, emotional=1, created_at="2026-01-01")
    old = memory.write(
        gesture="Old heavy", importance=5, emotional=5, unresolved=5, created_at="2026-01-02"
    )
    new = memory.write(
        gesture="New heavy", importance=5, emotional=5, unresolved=5, created_at="2026-01-03"
    )
    dream = memory.write(
        gesture="A heavy dream", kind="dream", emotional=5, unresolved=5, created_at="2026-01-04"
    )
    pool = prefetch_pool(memory, min_weight=0.5)
    assert [n.id for n in pool] == [new.id, old.id]
    everything = [n.id for n in prefetch_pool(memory, min_weight=0.0)]
    assert set(everything) == {light.id, old.id, new.id, dream.id} and everything[-1] == light.id
    assert dream.id not in {
        n.id for n in prefetch_pool(memory, min_weight=0.0, kinds=["narrative"])
    }
    assert [n.id for n in prefetch_pool(memory, min_weight=0.0, limit=1)] == [new.id]
    with pytest.raises(InvalidInput, match="min_weight"):
        prefetch_pool(memory, min_weight=2)
    with pytest.raises(InvalidInput, match="kinds"):
        prefetch_pool(memory, kinds=["memo"])
