"""Fusing ranked lists.

- `rrf_fuse`: reciprocal rank fusion, score = Σ 1/(k + rank) over the lists a record appears in
  (k = 60, ranks from 1). Robust to the incomparable scales of BM25 and cosine distance.
- `weighted_fuse`: cosine similarity plus a fixed boost when the record contains the query words
  verbatim (the narratives' rule: an exact keyword hit should win over semantic neighbours).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tideline.search._types import Hit

RRF_K = 60


def rrf_fuse(
    lists: Sequence[Sequence[Hit]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[Hit]:
    """Merge ranked lists by reciprocal rank, Σ w/(k + rank); keeps every score part.

    `weights` (one per list, default all 1) lets a weaker list count less — e.g. the vectors of a
    small embedder on conversational turns (see docs/benchmarks.md, LoCoMo).
    """
    weights = weights or [1.0] * len(lists)
    merged: dict[int, Hit] = {}
    for hits, weight in zip(lists, weights, strict=True):
        for rank, hit in enumerate(hits, start=1):
            into = merged.setdefault(hit.id, Hit(hit.id))
            into.absorb(hit)
            into.score += weight / (k + rank)
    return sorted(merged.values(), key=lambda h: (-h.score, h.id))


def weighted_fuse(hits: Iterable[Hit], boost: float = 0.3) -> list[Hit]:
    """Score = cosine similarity (0 when unknown) + `boost` for a verbatim keyword match."""
    out = []
    for hit in hits:
        sim = 1.0 - hit.vec_distance if hit.vec_distance is not None else 0.0
        hit.score = sim + (boost if hit.keyword_match else 0.0)
        out.append(hit)
    return sorted(out, key=lambda h: (-h.score, h.id))
