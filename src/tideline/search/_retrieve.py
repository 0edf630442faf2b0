"""`retrieve`: the one retrieval path. Memory, the library, its router and injection all call it.

Steps: parse the query; take lexical candidates from every scope (`depth` each), then vector
ones (so a query vector still being embedded on the query thread arrives meanwhile);
merge several scopes by raw score (BM25 descending, distance ascending) while one scope keeps
its own order; fuse the two lists by the `Policy`. When the mode needs vectors but there is no
query vector (no embedder, or it is down) the search runs lexically and says so once.

The index is typed by the `Candidates` protocol, which `TextIndex` satisfies, so this module does
not import `_index` (whose `search` delegates here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

import numpy as np

from tideline.search._analyse import Analyser
from tideline.search._centre import centre_query, raw_distances
from tideline.search._fallback import QueryVector, resolved
from tideline.search._fusion import fuse, ranks
from tideline.search._query import ParsedQuery, parse_query
from tideline.search._types import Hit, Mode, Policy, Retrieval

#: The owner's lookup of record texts by id (for verbatim keyword checks on a few candidates).
TextLookup = Callable[[Sequence[int]], Mapping[int, str]]

NO_EMBEDDER = "no embedder configured: vector search is off, showing lexical results"


class Candidates(Protocol):
    """What `retrieve` needs from an index (`TextIndex` has it)."""

    #: The lexical analyser that made the index's terms (the query is cut the same way).
    analyser: Analyser

    @property
    def model_id(self) -> str | None:
        """The model behind the index's vectors (None before any are bound): picks the query
        centring (`_centre`)."""
        ...

    def lexical(
        self,
        query: str | ParsedQuery,
        k: int,
        where: str | None = None,
        params: Sequence[object] = (),
        *,
        trigram: Literal["top_up", "fallback"] = "top_up",
    ) -> list[Hit]: ...

    def vector(
        self, qvec: np.ndarray, k: int, where: str | None = None, params: Sequence[object] = ()
    ) -> list[Hit]: ...

    def keyword_matches(
        self, parsed: ParsedQuery, ids: Sequence[int], texts: TextLookup | None = None
    ) -> set[int]: ...

    def distances(self, qvec: np.ndarray, ids: Sequence[int]) -> dict[int, float]: ...


@dataclass(frozen=True)
class Scope:
    """One index to search, narrowed by its owner: `where` is an SQL condition on `rowid`
    (e.g. "rowid IN (SELECT id FROM t WHERE …)") applied inside both candidate queries, so a
    filter never starves the top k. Only the table's owner writes it."""

    index: Candidates
    where: str | None = None
    params: tuple[object, ...] = ()


def literal_dashes(query: str) -> str:
    """Notes are full of command lines: `--clean` or `-t` is an option to find, never an
    exclusion (which is what a leading `-` means to `parse_query`)."""
    return " ".join(w.lstrip("-") if w.startswith("-") else w for w in query.split())


def retrieve(
    scopes: Candidates | Scope | Sequence[Scope],
    query: str,
    qvec: QueryVector,
    k: int,
    mode: Mode = "hybrid",
    policy: Policy = Policy(),  # noqa: B008 - frozen, so one shared default is safe
    *,
    texts: TextLookup | None = None,
    warning: str | None = None,
) -> Retrieval:
    """Search `scopes` for `query` (and its vector `qvec`); see the module docstring.

    `k` sets the candidate depth (see `Policy.depth`); every fused candidate is returned and the
    caller takes `Retrieval.top(k, …)`. `texts` (one scope only) lets the weighted fusion check
    verbatim keywords in Python instead of on the trigram table. `warning` is what the caller's
    `query_vector` said when the embedder was down. `qvec` may still be under way
    (`pending_vector`): the lexical lists are searched before it is waited for.
    """
    if isinstance(scopes, Scope):
        scopes = [scopes]
    elif not isinstance(scopes, Sequence):
        scopes = [Scope(scopes)]
    parsed = parse_query(
        literal_dashes(query) if policy.literal_dashes else query,
        scopes[0].index.analyser if scopes else "plain",
        stop_words=policy.stop_words,
    )
    depth = policy.depth_for(k)
    # The lexical lists first: a vector still being computed (`pending_vector`) arrives meanwhile.
    lex = _lexical(scopes, parsed, depth, policy) if mode != "vec" else []
    qvec, down = resolved(qvec) if mode != "lex" else (None, None)
    warnings: list[str] = []
    if mode != "lex" and qvec is None:
        note = warning or down or (NO_EMBEDDER if mode == "vec" else None)
        warnings += [note] if note else []
        lex = lex if mode == "hybrid" else _lexical(scopes, parsed, depth, policy)
        mode = "lex"
    raw = qvec
    if policy.centre and qvec is not None and scopes:
        qvec = centre_query(qvec, scopes[0].index.model_id)
    vec: list[list[Hit]] = []
    for n, s in enumerate(scopes):
        if mode in ("hybrid", "vec") and qvec is not None:
            found = s.index.vector(qvec, depth, s.where, s.params)
            vec.append([replace(h, source=n) for h in found])
    lex_all = _merged(lex, lambda h: -(h.lex_score or 0.0), "lex_rank", policy)
    vec_all = _merged(vec, lambda h: h.vec_distance or 0.0, "vec_rank", policy)
    if mode == "lex":
        hits = lex_all
        for h in hits:
            h.score = h.lex_score or 0.0
    elif mode == "vec":
        hits = vec_all
        for h in hits:
            h.score = 1.0 - (h.vec_distance or 0.0)
    else:
        if policy.fusion in ("weighted", "convex"):
            assert qvec is not None
            _annotate(scopes, parsed, qvec, lex_all + vec_all, texts)
        hits = fuse([lex_all, vec_all], policy)
    if raw is not None and qvec is not raw:
        raw_distances([s.index for s in scopes], hits, raw)
    return Retrieval(hits, mode, warnings)


def _lexical(
    scopes: Sequence[Scope], parsed: ParsedQuery, depth: int, policy: Policy
) -> list[list[Hit]]:
    """Each scope's lexical list, its hits tagged with the scope."""
    out: list[list[Hit]] = []
    for n, s in enumerate(scopes):
        found = s.index.lexical(parsed, depth, s.where, s.params, trigram=policy.trigram)
        out.append([replace(h, source=n) for h in found])
    return out


def _merged(
    lists: list[list[Hit]],
    order: Callable[[Hit], float],
    rank_field: Literal["lex_rank", "vec_rank"],
    policy: Policy,
) -> list[Hit]:
    """One list from the scopes' lists: a single scope keeps its order, several are merged by raw
    score (stable: scope order breaks ties); ranks are renumbered by the policy's tie rule."""
    merged = lists[0] if len(lists) == 1 else sorted((h for x in lists for h in x), key=order)
    # The hits are retrieve's own copies (made once per hit, with `source`): ranked in place.
    for hit, rank in zip(merged, ranks(merged, policy.ties), strict=True):
        setattr(hit, rank_field, rank)
    return list(merged)


def _annotate(
    scopes: Sequence[Scope],
    parsed: ParsedQuery,
    qvec: np.ndarray,
    hits: list[Hit],
    texts: TextLookup | None,
) -> None:
    """For the weighted fusion: mark verbatim keyword matches and fill in the distance of
    lexical-only candidates, per scope."""
    for n, s in enumerate(scopes):
        mine = [h for h in hits if h.source == n]
        ids = sorted({h.id for h in mine})
        matches = s.index.keyword_matches(parsed, ids, texts if len(scopes) == 1 else None)
        missing = sorted({h.id for h in mine if h.vec_distance is None})
        dist = s.index.distances(qvec, missing)
        for h in mine:
            h.keyword_match = h.id in matches
            if h.vec_distance is None and h.id in dist:
                h.vec_distance = dist[h.id]
