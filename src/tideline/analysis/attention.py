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

from tideline.analysis._store import now, parse_time
from tideline.store import Database

__all__ = ["ClusterHeat", "Heatmap", "heatmap", "log_hits"]

HitLike = Any  # a MemoryHit-like object (.id, .type, .score, .vec_distance) or (id, similarity)


def _hit_fields(hit: HitLike) -> tuple[int, float] | None:
    """(narrative id, similarity) of one hit, or None for raw-turn hits."""
    if isinstance(hit, tuple | list):
        nid, similarity = hit
        return int(nid), float(similarity)
    if getattr(hit, "type", "narrative") != "narrative":
        return None
    distance = getattr(hit, "vec_distance", None)
    similarity = 1.0 - float(distance) if distance is not None else float(hit.score)
    return int(hit.id), similarity


def log_hits(
    db: Database,
    hits: Iterable[HitLike],
    query: str = "",
    source: str = "prefetch",
    *,
    at: str | None = None,
) -> int:
    """Record retrieval hits; returns how many rows were written.

    `hits` are `tideline.memory.MemoryHit`s (turn hits are ignored; the similarity is
    1 − vec_distance when the vector part is known, else the fused score) or plain
    `(narrative_id, similarity)` pairs. `at` is an ISO time (default now). Unknown narrative ids
    are skipped. Example, in a prefetch hook::

        result = app.memory.search(message, k=5)
        log_hits(app.db, result.hits, query=message)
    """
    pairs = [p for p in (_hit_fields(h) for h in hits) if p is not None]
    if not pairs:
        return 0
    stamp = parse_time(at, "at") or now()
    ids = sorted({nid for nid, _ in pairs})
    marks = ",".join("?" * len(ids))
    known = {r[0] for r in db.execute(f"SELECT id FROM narratives WHERE id IN ({marks})", ids)}
    nearest = dict(
        db.execute(
            "SELECT narrative_id, cluster_id FROM emb_cluster_members"
            f" WHERE rank = 1 AND narrative_id IN ({marks})",
            ids,
        ).fetchall()
    )
    rows = [
        (nid, nearest.get(nid), round(sim, 6), query[:1000], source, stamp)
        for nid, sim in pairs
        if nid in known
    ]
    with db.transaction():
        db.executemany(
            "INSERT INTO attention_log(narrative_id, cluster_id, similarity, query, source, at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
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


def heatmap(db: Database, since: str | None = None, until: str | None = None) -> Heatmap:
    """Attention per soft cluster between `since` and `until` (ISO times, both optional)."""
    since_t, until_t = parse_time(since, "since"), parse_time(until, "until", end_of_day=True)
    conds, params = [], []
    if since_t:
        conds.append("a.at >= ?")
        params.append(since_t)
    if until_t:
        conds.append("a.at <= ?")
        params.append(until_t)
    where = f"WHERE {' AND '.join(conds)}" if conds else ""
    clusters = {
        r["id"]: ClusterHeat(r["id"], r["label"] or f"cluster {r['id']}", r["size"])
        for r in db.rows("SELECT id, label, size FROM emb_clusters ORDER BY id")
    }
    total = int(db.scalar(f"SELECT count(*) FROM attention_log a {where}", params) or 0)
    rows = db.execute(
        "SELECT m.cluster_id, count(*), count(DISTINCT a.narrative_id), avg(a.similarity),"
        " max(a.at) FROM attention_log a JOIN emb_cluster_members m"
        f" ON m.narrative_id = a.narrative_id AND m.rank = 1 {where} GROUP BY m.cluster_id",
        params,
    ).fetchall()
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
