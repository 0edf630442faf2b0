"""Search result types: every hit carries the parts its score was made of, and the per-use policy
that decides how the parts are fused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from itertools import groupby
from typing import Any, Literal

Mode = Literal["hybrid", "lex", "vec"]
MODES: tuple[str, ...] = ("hybrid", "lex", "vec")

#: Fused scores are compared at this many places, so float noise never breaks a tie.
SCORE_PLACES = 12


@dataclass
class Hit:
    """One record found. `id` is the record's rowid in its owner table.

    lex_rank / lex_score: position and BM25 score (higher is better) in the lexical list;
    lex_source: "bm25" or "trigram" (substring fallback); vec_rank / vec_distance: position and
    cosine distance in the vector list; keyword_match: the record contains every query word
    verbatim; score: the fused score that ordered the results; source: which `Scope` of a
    several-collection search the record came from (ids are unique only inside one);
    fusion: "rrf" or "weighted" when `score` fused two lists, None when it is one list's own.
    """

    id: int
    score: float = 0.0
    lex_rank: int | None = None
    lex_score: float | None = None
    lex_source: str | None = None
    vec_rank: int | None = None
    vec_distance: float | None = None
    keyword_match: bool = False
    source: int = 0
    fusion: str | None = None

    @property
    def key(self) -> tuple[int, int]:
        """(source, id): unique across the scopes of one search."""
        return self.source, self.id

    def absorb(self, other: Hit) -> None:
        """Copy the score parts `other` knows into this hit."""
        for name in ("lex_rank", "lex_score", "lex_source", "vec_rank", "vec_distance"):
            value = getattr(other, name)
            if value is not None and getattr(self, name) is None:
                setattr(self, name, value)
        self.keyword_match = self.keyword_match or other.keyword_match

    def parts(self) -> dict[str, Any]:
        return asdict(self)

    def explain(self) -> str:
        """How the score was made, for people: "rrf 0.0325 · bm25 #1 7.12 · vec #3 d=0.214"."""
        out = [f"{self.fusion} {self.score:.4f}"] if self.fusion else []
        if self.lex_rank is not None:
            out.append(f"{self.lex_source or 'bm25'} #{self.lex_rank} {self.lex_score or 0.0:.2f}")
        if self.vec_rank is not None or self.vec_distance is not None:
            rank = f"#{self.vec_rank} " if self.vec_rank is not None else ""
            out.append(f"vec {rank}d={self.vec_distance or 0.0:.3f}")
        if self.keyword_match:
            out.append("keyword")
        return " · ".join(out) or f"score {self.score:.4f}"


@dataclass(frozen=True)
class Policy:
    """How one use of search ranks: built from `Settings` by the composition root, never copied.

    fusion: "rrf" (reciprocal rank, robust to BM25 and cosine scales) or "weighted" (cosine +
    `boost` for a verbatim keyword match: an exact hit beats semantic neighbours); rrf_k and
    weights (lexical, vector) tune RRF; ties "competition" lets equal raw scores share a rank, so
    identical notes fuse to equal scores and recency can decide; depth is the candidates taken
    from each list (None: max(4k, 40)); trigram "top_up" adds substring matches when BM25 finds
    too few, "fallback" only when it finds none (cheaper on large collections); literal_dashes
    reads '-t' and '--clean' as words to find, not exclusions (notes are full of command lines);
    stop_words drops a query's stop and question words when two other words remain (lexical
    list only; the vector sees the whole query); alpha is the lexical share of the "convex"
    fusion (α · BM25/best + (1 − α) · min–max cosine, + `boost` for a verbatim keyword match);
    centre ranks the vector list by the query less its language's mean query vector
    (`_centre`; hits keep their distance to the query as embedded).
    """

    fusion: Literal["rrf", "weighted", "convex"] = "rrf"
    rrf_k: int = 60
    weights: tuple[float, float] = (1.0, 1.0)
    boost: float = 0.3
    ties: Literal["ordinal", "competition"] = "ordinal"
    depth: int | None = None
    trigram: Literal["top_up", "fallback"] = "top_up"
    literal_dashes: bool = False
    stop_words: bool = True
    alpha: float = 0.5
    centre: bool = False

    def depth_for(self, k: int) -> int:
        return self.depth or max(k * 4, 40)


@dataclass
class Retrieval:
    """Everything one search found, best first, and what it could not do.

    hits: every candidate; fused results are ordered by (-score, source, id), a single list (mode
    lex or vec, or no query vector) keeps its own order. mode: what ran ("lex" when there was no
    query vector). warnings: one line each, for the user.
    """

    hits: list[Hit]
    mode: Mode
    warnings: list[str] = field(default_factory=list)

    def top(self, k: int, recency: Mapping[tuple[int, int], float] | None = None) -> list[Hit]:
        """The first `k` hits; among hits with equal scores the more recent (by `recency`, keyed
        by (source, id)) comes first, then (source, id)."""
        if recency is None:
            return self.hits[:k]
        out: list[Hit] = []
        for _, tied in groupby(self.hits, key=lambda h: round(h.score, SCORE_PLACES)):
            out += sorted(tied, key=lambda h: (-recency.get(h.key, 0.0), h.key))
            if len(out) >= k:
                break
        return out[:k]
