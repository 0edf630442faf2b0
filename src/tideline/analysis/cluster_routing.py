"""Soft clusters of the stored narrative vectors, and query routing over them.

`rebuild_clusters` reads the narrative vectors already embedded (nothing is embedded here), runs
`build_soft_clusters` and stores `emb_clusters` (unit centroid, model id, hard size = narratives
whose nearest cluster it is, soft size = narratives having it in their top 3, a label),
`emb_cluster_members` (rank 1 = nearest) and `emb_cluster_adjacency` (shared narratives, both
directions). Narratives without a vector are skipped and counted. Cluster ids are 1..k in k-means
order and are NOT stable across rebuilds; anything that must survive a rebuild refers to
narratives, not clusters.

A cluster's label is the three topic labels most common among its nearest members (from
`topic_members`, so build topics first); without topics, the gesture of the member nearest to the
centroid.

Routing (named apart from the library's collection router, `tideline.library`):
`route_clusters(memory, vector)` gives the clusters nearest to a query vector (with `wide`, then
the clusters that share narratives with them, most shared first), and `cluster_narratives` lists
the narratives to search inside the routed clusters. Search and prefetch do not route: measured
on LoCoMo (bench/locomo_retrieval.py, its only caller; docs/benchmarks.md), routing to the
clusters, with or without their adjacent ones, finds the same as searching every narrative, which
takes milliseconds at the sizes agents have (docs/scripts.md, "Cluster routing").
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, SupportsInt, cast

import numpy as np

from tideline.analysis._store import ScriptTables
from tideline.analysis.soft_clusters import build_soft_clusters, nearest_clusters
from tideline.clock import now_text
from tideline.memory import Memory, Narrative

__all__ = [
    "ClustersReport",
    "cluster_narratives",
    "rebuild_clusters",
    "route_clusters",
]

LABEL_TOPICS = 3


@dataclass
class ClustersReport:
    """What a rebuild found: k, how many narratives were clustered or skipped, label changes."""

    narratives: int
    clustered: int
    skipped_no_vector: int
    k: int
    model_id: str | None
    changed: bool
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _labels(
    tables: ScriptTables,
    hard: dict[int, list[int]],
    nearest_member: dict[int, int],
    gestures: dict[int, str],
) -> dict[int, str]:
    topics_of = tables.topics_by_narrative()
    topic = tables.topic_labels()
    labels: dict[int, str] = {}
    for cluster, members in hard.items():
        counts = Counter(t for nid in members for t in topics_of.get(nid, ()))
        best = sorted(counts, key=lambda t: (-counts[t], topic[t][1], topic[t][0]))
        if best:
            labels[cluster] = " / ".join(topic[t][0] for t in best[:LABEL_TOPICS])
        else:
            text = " ".join(gestures.get(nearest_member.get(cluster, -1), "").split())
            labels[cluster] = text if len(text) <= 60 else text[:59].rstrip() + "…"
    return labels


def rebuild_clusters(
    memory: Memory,
    *,
    seed: int = 0,
    top_m: int = 3,
    min_similarity: float | None = None,
    narratives: list[Narrative] | None = None,
) -> ClustersReport:
    """Rebuild the soft clusters from the stored narrative vectors (one transaction)."""
    rows = memory.narratives.all() if narratives is None else narratives
    tables = ScriptTables(memory.db, memory.clock)
    existing = {n.id for n in rows}
    space = memory.narratives.index.space
    ids, matrix = memory.narratives.index.vectors()
    keep = np.isin(ids, np.fromiter(existing, dtype=np.int64, count=len(existing)))
    ids, matrix = ids[keep], matrix[keep]
    result = build_soft_clusters(
        zip(ids.tolist(), matrix, strict=True),
        top_m=top_m,
        min_similarity=min_similarity,
        seed=seed,
    )
    clustered = len(ids) - result.skipped
    report = ClustersReport(
        narratives=len(rows),
        clustered=clustered,
        skipped_no_vector=len(rows) - clustered,
        k=result.k,
        model_id=space[0] if space else None,
        changed=False,
    )
    if space is None:
        report.note = "no narrative vectors; run `tideline embed` to cluster by meaning"

    hard: dict[int, list[int]] = defaultdict(list)
    nearest_member: dict[int, tuple[float, int]] = {}
    members = []
    for m in result.memberships:
        cid, nid = m.cluster + 1, int(cast(SupportsInt, m.item_id))
        members.append((nid, cid, m.rank + 1, m.similarity))
        if m.rank == 0:
            hard[cid].append(nid)
            best = nearest_member.get(cid)
            if best is None or (-m.similarity, nid) < (-best[0], best[1]):
                nearest_member[cid] = (m.similarity, nid)
    gestures = {n.id: n.gesture for n in rows}
    labels = _labels(tables, hard, {c: v[1] for c, v in nearest_member.items()}, gestures)
    new_clusters = [
        (
            c + 1,
            int(result.hard_sizes[c]),
            int(result.soft_sizes[c]),
            result.centroids[c].astype(np.float32).tobytes(),
            report.model_id or "",
            labels.get(c + 1, ""),
        )
        for c in range(result.k)
    ]
    members.sort()
    adjacency = [
        (int(a) + 1, int(b) + 1, int(result.adjacency[a, b]))
        for a, b in zip(*np.nonzero(result.adjacency), strict=True)
    ]
    old_clusters, old_members = tables.clusters(), tables.cluster_members()
    if new_clusters == old_clusters and members == old_members:
        return report
    old_labels, new_labels = {r[5] for r in old_clusters}, {r[5] for r in new_clusters}
    report.changed = True
    report.added = sorted(new_labels - old_labels)
    report.removed = sorted(old_labels - new_labels)
    tables.replace_clusters(new_clusters, members, adjacency, now_text(memory.clock))
    return report


def route_clusters(
    memory: Memory, vector: Sequence[float] | np.ndarray, top_m: int = 3, *, wide: bool = True
) -> list[int]:
    """Clusters for a query vector: its `top_m` nearest centroids, then (with `wide`) their
    neighbours. Empty when no clusters are built."""
    tables = ScriptTables(memory.db, memory.clock)
    ids, centroids = tables.centroids()
    if not ids:
        return []
    nearest = [ids[c] for c, _ in nearest_clusters(vector, centroids, top_m)]
    return tables.widen(nearest) if wide else nearest


def cluster_narratives(memory: Memory, cluster_ids: Iterable[int], max_rank: int = 3) -> list[int]:
    """Narratives that have one of these clusters among their `max_rank` nearest."""
    return ScriptTables(memory.db, memory.clock).cluster_narratives(cluster_ids, max_rank)
