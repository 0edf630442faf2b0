"""Soft k-means clusters in embedding space, with an adjacency matrix for query routing.

Vectors are L2-normalised first, so k-means on them groups by cosine similarity (whatever the
embedding model). k = max(5, int(sqrt(N) · 1.5)), capped at N and at the number of distinct
vectors. Each item then belongs to its `top_m` (3) nearest centroids with their cosine similarities,
so a memory that spans two themes is visible from both. `adjacency[a, b]` counts the items that
clusters a and b share; a query that lands in cluster a can be widened to a's neighbours.

Deterministic for a fixed seed: k-means++ seeding uses `seed`, and ties in similarity go to the
lower cluster index.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

_SEED_SAMPLE = 10_000

__all__ = [
    "Membership",
    "SoftClustering",
    "build_soft_clusters",
    "choose_k",
    "nearest_clusters",
    "neighbours",
]


@dataclass(frozen=True, slots=True)
class Membership:
    """Item `item_id` belongs to `cluster` with cosine `similarity`; `rank` 0 is its nearest."""

    item_id: Hashable
    cluster: int
    similarity: float
    rank: int


@dataclass(frozen=True)
class SoftClustering:
    """The result: unit-length centroids (k × dim), memberships sorted by item then rank,
    the k × k shared-item adjacency (zero diagonal), soft sizes (items having the cluster in their
    top m), hard sizes (items whose nearest centroid it is), and how many inputs were skipped
    (no vector, a different dimension, zero length or non-finite values)."""

    k: int
    centroids: np.ndarray
    memberships: tuple[Membership, ...]
    adjacency: np.ndarray
    soft_sizes: np.ndarray
    hard_sizes: np.ndarray
    skipped: int


def choose_k(n: int, minimum: int = 5, factor: float = 1.5) -> int:
    """k = max(minimum, int(sqrt(n) · factor)), capped at n (0 when there is nothing)."""
    if n <= 0:
        return 0
    return min(n, max(minimum, int(math.sqrt(n) * factor)))


def _clean(
    items: Iterable[tuple[Hashable, Sequence[float] | np.ndarray | None]],
) -> tuple[list[Hashable], np.ndarray, int]:
    """Stack usable vectors (unit length); count the ones that cannot be clustered."""
    ids: list[Hashable] = []
    rows: list[np.ndarray] = []
    skipped = 0
    dim: int | None = None
    for item_id, vector in items:
        if vector is None:
            skipped += 1
            continue
        v = np.asarray(vector, dtype=np.float32).ravel()
        if dim is None and v.size:
            dim = v.size
        norm = float(np.linalg.norm(v)) if v.size else 0.0
        if v.size != dim or not math.isfinite(norm) or norm == 0.0:
            skipped += 1
            continue
        ids.append(item_id)
        rows.append(v / norm)
    matrix = np.vstack(rows) if rows else np.zeros((0, dim or 0), dtype=np.float32)
    return ids, matrix, skipped


def _top_m(sims: np.ndarray, m: int) -> np.ndarray:
    """Indices of the m largest similarities per row, best first, ties to the lower index."""
    # A stable sort of the negated similarities keeps equal values in index order.
    return np.argsort(-sims, axis=1, kind="stable")[:, :m]


def _kmeans(x: np.ndarray, k: int, *, seed: int, n_init: int, max_iter: int) -> np.ndarray:
    """Best-of-`n_init` k-means centroids.

    k-means++ seeding costs n·k·d·log k and dominated the run time at 50k items, so it runs on a
    seeded sample of at most max(`_SEED_SAMPLE`, 20·k) items; Lloyd's iterations then use all.
    """
    from sklearn.cluster import KMeans, kmeans_plusplus
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(seed)
    best: tuple[float, np.ndarray] | None = None
    for _ in range(max(1, n_init)):
        sample_size = min(x.shape[0], max(_SEED_SAMPLE, 20 * k))
        sample = x
        if sample_size < x.shape[0]:
            sample = x[np.sort(rng.choice(x.shape[0], sample_size, replace=False))]
        # float64 here is twice as fast: sklearn upcasts float32 distances chunk by chunk.
        init, _indices = kmeans_plusplus(
            sample.astype(np.float64), k, random_state=int(rng.integers(0, 2**31 - 1))
        )
        model = KMeans(n_clusters=k, init=init.astype(x.dtype), n_init=1, max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x)
        if best is None or model.inertia_ < best[0]:
            best = (float(model.inertia_), model.cluster_centers_.astype(np.float32))
    assert best is not None
    return best[1]


def build_soft_clusters(
    items: Iterable[tuple[Hashable, Sequence[float] | np.ndarray | None]],
    *,
    k: int | None = None,
    top_m: int = 3,
    min_similarity: float | None = None,
    seed: int = 0,
    n_init: int = 2,
    max_iter: int = 100,
) -> SoftClustering:
    """Cluster `(item_id, vector)` pairs; see the module docstring. `k` overrides `choose_k`.

    With `min_similarity`, memberships beyond the nearest one need at least that cosine
    similarity, so a weak third-nearest centroid neither claims the item nor adds adjacency.
    """
    if top_m < 1:
        raise ValueError(f"top_m={top_m}: each item needs at least its nearest cluster")
    ids, x, skipped = _clean(items)
    n = len(ids)
    distinct = len({row.tobytes() for row in x})
    k = min(choose_k(n) if k is None else k, distinct)
    if k <= 0:
        empty = np.zeros((0, 0), dtype=np.int64)
        return SoftClustering(
            0,
            np.zeros((0, x.shape[1]), dtype=np.float32),
            (),
            empty,
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            skipped,
        )

    centroids = (
        x.mean(axis=0, keepdims=True)
        if k == 1
        else _kmeans(x, k, seed=seed, n_init=n_init, max_iter=max_iter)
    )
    norms = np.linalg.norm(centroids, axis=1, keepdims=True)
    centroids = centroids / np.where(norms == 0.0, 1.0, norms)

    m = min(top_m, k)
    sims = x @ centroids.T
    top = _top_m(sims, m)
    top_sims = np.take_along_axis(sims, top, axis=1)
    keep = np.ones_like(top, dtype=bool)
    if min_similarity is not None:
        keep[:, 1:] = top_sims[:, 1:] >= min_similarity

    shared = np.zeros((k, k), dtype=np.int64)
    for i in range(m):
        for j in range(i + 1, m):
            both = keep[:, i] & keep[:, j]
            np.add.at(shared, (top[both, i], top[both, j]), 1)
    shared = shared + shared.T
    soft_sizes = np.bincount(top[keep], minlength=k)
    hard_sizes = np.bincount(top[:, 0], minlength=k)

    memberships = tuple(
        Membership(item_id, int(c), round(float(s), 6), rank)
        for item_id, row, row_sims, row_keep in zip(
            ids, top.tolist(), top_sims.tolist(), keep.tolist(), strict=True
        )
        for rank, (c, s, kept) in enumerate(zip(row, row_sims, row_keep, strict=True))
        if kept
    )
    return SoftClustering(k, centroids, memberships, shared, soft_sizes, hard_sizes, skipped)


def nearest_clusters(
    vector: Sequence[float] | np.ndarray, centroids: np.ndarray, top_m: int = 3
) -> list[tuple[int, float]]:
    """The `top_m` clusters nearest to a query vector, as (cluster, cosine similarity)."""
    if centroids.shape[0] == 0:
        return []
    v = np.asarray(vector, dtype=np.float32).ravel()
    norm = float(np.linalg.norm(v))
    if v.size != centroids.shape[1] or norm == 0.0 or not math.isfinite(norm):
        raise ValueError(
            f"query vector has dimension {v.size} and norm {norm}; it must be a non-zero finite "
            f"vector of the centroids' dimension {centroids.shape[1]}"
        )
    sims = (centroids @ (v / norm))[None, :]
    top = _top_m(sims, min(top_m, centroids.shape[0]))[0]
    return [(int(c), round(float(sims[0, c]), 6)) for c in top]


def neighbours(cluster: int, adjacency: np.ndarray, min_shared: int = 1) -> list[int]:
    """Clusters sharing at least `min_shared` items with `cluster`, most shared first."""
    if not 0 <= cluster < adjacency.shape[0]:
        raise ValueError(f"cluster {cluster} does not exist; there are {adjacency.shape[0]}")
    row = adjacency[cluster]
    found = [int(c) for c in np.flatnonzero(row >= max(1, min_shared)) if c != cluster]
    return sorted(found, key=lambda c: (-int(row[c]), c))
