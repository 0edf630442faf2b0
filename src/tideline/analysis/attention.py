"""Attention tracking: which memories retrieval actually lights up, and which clusters it never does.

`log_hits` is pure bookkeeping for the prefetch hook (T1): one row per narrative hit in
`attention_log` with the narrative, its nearest soft cluster at that moment (rank 1 in
`emb_cluster_members`; NULL before clusters exist), the similarity, the query and the time. It costs
one small SELECT and one INSERT batch, and never raises on ids it does not know (they are skipped),
so a prefetch never fails because of it.

`heatmap` counts the hits of a time window per soft cluster. Clusters are rebuilt daily and their
ids are not stable across rebuilds, so a hit is attributed to the narrative's *current* nearest
cluster (the logged `cluster_id` is the historical record). Clusters with no hit in the window are
the "attention deserts": themes retrieval never reaches. Hits on narratives that are in no current
cluster (no vector, or clusters not built yet) are counted as `unclustered`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from tideline.analysis._store import ScriptTables
from tideline.clock import now_text, parse_time
from tideline.memory import Memory
from tideline.search import Hit

__all__ = ["ClusterHeat", "Heatmap", "heatmap", "log_hits"]

#: A search hit, or a (narrative id, similarity) pair.
HitLike = Hit | tuple[int, float]


def _hit_fields(hit: HitLike) -> tuple[int, float] | None:
    """(narrative id, similarity) of one hit, or None for raw-turn hits."""
    if isinstance(hit, tuple):
        nid, similarity = hit
        return int(nid), float(similarity)
    if hit.type != "narrative":
        return None
    distance = hit.vec_distance
    similarity = 1.0 - float(distance) if distance is not None else float(hit.score)
    return int(hit.id), similarity


def log_hits(
    memory: Memory,
    hits: Iterable[HitLike],
    query: str = "",
    source: str = "prefetch",
    *,
    at: str | None = None,
) -> int:
    """Record retrieval hits; returns how many rows were written.

    `hits` are search `Hit`s (turn hits are ignored; the similarity is
    1 − vec_distance when the vector part is known, else the fused score) or plain
    `(narrative_id, similarity)` pairs. `at` is an ISO time (default now). Unknown narrative ids
    are skipped. Example, in a prefetch hook::

        result = app.memory.search(message, k=5)
        log_hits(app.memory, result.hits, query=message)
    """
    pairs = [p for p in (_hit_fields(h) for h in hits) if p is not None]
    if not pairs:
        return 0
    stamp = parse_time(at, "at") or now_text(memory.clock)
    ids = sorted({nid for nid, _ in pairs})
    known = memory.narratives.existing(ids)
    tables = ScriptTables(memory.db, memory.clock)
    nearest = tables.nearest_cluster(ids)
    rows = [
        (nid, nearest.get(nid), round(sim, 6), query[:1000], source, stamp)
        for nid, sim in pairs
        if nid in known
    ]
    tables.log_attention(rows)
    return len(rows)


@dataclass
class ClusterHeat:
    """One soft cluster in a window: its hits, the distinct narratives hit, mean similarity."""

    cluster_id: int
    label: str
    size: int
    hits: int = 0
    narratives_hit: int = 0
    share: float = 0.0
    mean_similarity: float | None = None
    last_hit: str | None = None


@dataclass
class Heatmap:
    """Hits per cluster (most lit first), the deserts (clusters never lit), and the rest."""

    since: str | None
    until: str | None
    total_hits: int
    clusters: list[ClusterHeat] = field(default_factory=list)
    deserts: list[ClusterHeat] = field(default_factory=list)
    unclustered_hits: int = 0
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def heatmap(memory: Memory, since: str | None = None, until: str | None = None) -> Heatmap:
    """Attention per soft cluster between `since` and `until` (ISO times, both optional), read
    under the memory's lock (drivers call it from worker threads)."""
    with memory.lock:
        return _heatmap(memory, since, until)


def _heatmap(memory: Memory, since: str | None, until: str | None) -> Heatmap:
    since_t, until_t = parse_time(since, "since"), parse_time(until, "until", end_of_day=True)
    tables = ScriptTables(memory.db, memory.clock)
    clusters = {
        cid: ClusterHeat(cid, label or f"cluster {cid}", size)
        for cid, size, _, _, _, label in tables.clusters()
    }
    total, rows = tables.attention(since_t, until_t)
    lit = 0
    for cid, hits, distinct, mean, last in rows:
        heat = clusters.get(cid)
        if heat is None:
            continue
        heat.hits, heat.narratives_hit, heat.last_hit = int(hits), int(distinct), last
        heat.mean_similarity = round(float(mean), 4)
        heat.share = round(hits / total, 4) if total else 0.0
        lit += int(hits)
    ordered = sorted(clusters.values(), key=lambda c: (-c.hits, c.cluster_id))
    note = ""
    if not clusters:
        note = "no soft clusters yet; run `tideline scripts clusters` (needs narrative vectors)"
    elif not total:
        note = "no retrieval hits logged in this window"
    return Heatmap(
        since=since_t,
        until=until_t,
        total_hits=total,
        clusters=[c for c in ordered if c.hits],
        deserts=[c for c in ordered if not c.hits],
        unclustered_hits=total - lit,
        note=note,
    )
