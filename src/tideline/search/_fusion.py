"""Fusing ranked lists: the one place where lexical and vector scores meet.

- `rrf_fuse`: reciprocal rank fusion, score = Σ w/(k + rank) over the lists a record appears in
  (k = 60, ranks from 1). Robust to the incomparable scales of BM25 and cosine distance.
- `weighted_fuse`: cosine similarity plus a fixed boost when the record contains the query words
  verbatim (the narratives' rule: an exact keyword hit should win over semantic neighbours), plus
  optionally a share of BM25 / the best BM25 (the source-link backfill's rule).
- `convex_fuse`: fusion by score, not rank: α · lexical + (1 − α) · vector, each normalised on
  this query's candidates (BM25 / the best BM25; cosine min–max), plus the keyword boost. A
  strong lexical hit keeps its lead over a list of near-equal neighbours, which RRF flattens.
- `fuse`: picks one of them by the `Policy`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from tideline.search._hits import SCORE_PLACES, Hit, Policy

RRF_K = 60

#: Raw scores are equal for ranking when they agree to this many places (BM25 of two identical
#: notes can differ in the last bits).
TIE_PLACES = 9

Ties = Literal["ordinal", "competition"]


def _raw(hit: Hit) -> tuple[float | None, float | None]:
    def r(v: float | None) -> float | None:
        return None if v is None else round(v, TIE_PLACES)

    return r(hit.lex_score), r(hit.vec_distance)


def ranks(hits: Sequence[Hit], ties: Ties = "ordinal") -> list[int]:
    """1, 2, 3, … by position; "competition": hits with equal raw scores (BM25, distance) share
    the rank of the first of them (1, 2, 2, 4)."""
    if ties == "ordinal":
        return list(range(1, len(hits) + 1))
    out: list[int] = []
    prev: object = object()
    rank = 0
    for n, hit in enumerate(hits, start=1):
        raw = _raw(hit)
        if raw != prev:
            rank, prev = n, raw
        out.append(rank)
    return out


def _ordered(hits: Iterable[Hit]) -> list[Hit]:
    return sorted(hits, key=lambda h: (-round(h.score, SCORE_PLACES), h.source, h.id))


def rrf_fuse(
    lists: Sequence[Sequence[Hit]],
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    ties: Ties = "ordinal",
) -> list[Hit]:
    """Merge ranked lists by reciprocal rank, Σ w/(k + rank); keeps every score part.

    `weights` (one per list, default all 1) lets a weaker list count less — e.g. the vectors of a
    small embedder on conversational turns (see docs/benchmarks.md, LoCoMo). Records are keyed by
    (source, id), so lists from several collections fuse without clashing ids.
    """
    weights = weights or [1.0] * len(lists)
    merged: dict[tuple[int, int], Hit] = {}
    for hits, weight in zip(lists, weights, strict=True):
        for rank, hit in zip(ranks(hits, ties), hits, strict=True):
            into = merged.setdefault(hit.key, Hit(hit.id, source=hit.source, fusion="rrf"))
            into.absorb(hit)
            into.score += weight / (k + rank)
    return _ordered(merged.values())


def weighted_fuse(hits: Iterable[Hit], boost: float = 0.3, lex_share: float = 0.0) -> list[Hit]:
    """Score = cosine similarity (0 when unknown) + `boost` for a verbatim keyword match +
    `lex_share` × BM25 / the best BM25 (a graded lexical bonus: the backfill's rule)."""
    out = list(hits)
    best = max((h.lex_score or 0.0 for h in out if h.lex_source != "trigram"), default=0.0)
    for hit in out:
        sim = 1.0 - hit.vec_distance if hit.vec_distance is not None else 0.0
        hit.score = sim + (boost if hit.keyword_match else 0.0)
        if lex_share and best > 0 and hit.lex_source != "trigram":
            hit.score += lex_share * (hit.lex_score or 0.0) / best
        hit.fusion = "weighted"
    return _ordered(out)


def lex_norm(hits: Iterable[Hit]) -> dict[tuple[int, int], float]:
    """Each lexical hit's BM25 over the best BM25 (0–1]; trigram top-ups rank below the weakest
    BM25 hit, scaled the same way within their own list."""
    by_source: dict[str, list[Hit]] = {}
    for h in hits:
        if h.lex_score is not None:
            by_source.setdefault(h.lex_source or "bm25", []).append(h)
    out: dict[tuple[int, int], float] = {}
    floor = 1.0
    for source in ("bm25", "trigram"):
        group = by_source.get(source, [])
        top = max((h.lex_score or 0.0 for h in group), default=0.0)
        for h in group:
            out[h.key] = floor * (h.lex_score or 0.0) / top if top > 0 else 0.0
        if group:
            floor = min(out[h.key] for h in group)
    return out


def convex_fuse(
    lists: Sequence[Sequence[Hit]], alpha: float = 0.5, boost: float = 0.0
) -> list[Hit]:
    """Score = α · BM25/best + (1 − α) · min–max cosine + `boost` for a verbatim keyword match.

    Expects the candidates' `vec_distance` filled in where known (see `retrieve`); a record
    missing from a list scores 0 on it.
    """
    merged = rrf_fuse(lists)
    lex = lex_norm(merged)
    sims = [1.0 - h.vec_distance for h in merged if h.vec_distance is not None]
    lo, hi = (min(sims), max(sims)) if sims else (0.0, 0.0)
    for h in merged:
        vec = 0.0
        if h.vec_distance is not None:  # one candidate (or all equal): the nearest there is
            vec = max(0.0, (1.0 - h.vec_distance - lo) / (hi - lo)) if hi > lo else 1.0
        h.score = alpha * lex.get(h.key, 0.0) + (1.0 - alpha) * vec
        h.score += boost if h.keyword_match else 0.0
        h.fusion = "convex"
    return _ordered(merged)


def fuse(lists: Sequence[Sequence[Hit]], policy: Policy) -> list[Hit]:
    """Fuse (lexical, vector) lists by the policy. `weighted` and `convex` expect the hits'
    keyword_match and vec_distance already filled in (see `retrieve`)."""
    if policy.fusion == "weighted":
        return weighted_fuse(rrf_fuse(lists, policy.rrf_k), policy.boost, policy.lex_share)
    if policy.fusion == "convex":
        return convex_fuse(lists, policy.alpha, policy.boost)
    return rrf_fuse(lists, policy.rrf_k, policy.weights, policy.ties)
