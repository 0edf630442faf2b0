"""Search result types: the one hit type every search returns (memory, library, router,
profile), the per-use policy that ranks it, and the result of one search.

A `Hit` carries its source (a record id, or `path:line` for a note), what it says, and the
parts its score was made of; `score` is its relevance, 0–1, the estimated probability that it is
relevant (`_score`), which orders, cuts and is shown. The parts (BM25, cosine, ranks, what each
lever added) are for the explanation only (`Hit.explain`), which every driver prints as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import groupby
from typing import Any, Literal

Mode = Literal["hybrid", "lex", "vec"]
MODES: tuple[str, ...] = ("hybrid", "lex", "vec")

#: Scores are compared at this many places, so float noise never breaks a tie.
SCORE_PLACES = 12

#: What a hit can be: a conversation turn, a narrative memory, a profile fact, a library note
#: (a chunk of one), a collection (routing); `record` is any other owner's record.
KINDS: tuple[str, ...] = ("turn", "narrative", "fact", "note", "collection", "record")

#: The fields of `Hit` that say what the record is (the owner fills them); the rest are the
#: score and its parts. `to_dict` leaves out the ones a kind does not have.
_ABOUT = (
    "text",
    "created_at",
    "weight",
    "tags",
    "session",
    "speaker",
    "collection",
    "path",
    "line",
    "heading",
    "match",
    "part",
    "mtime",
    "window",
)


#: The score parts `Hit.absorb` takes from another list's copy of a record.
_PARTS = (
    "lex_rank",
    "lex_score",
    "lex_source",
    "vec_rank",
    "vec_distance",
    "lexical",
    "held",
    "matched",
)


#: Words a time phrase may begin with that already say how it relates to a time.
_RELATING = {"in", "on", "at", "during", "before", "after", "since", "until", "till", "by",
             "between", "from", "around", "over", "within", "throughout"}  # fmt: skip


def during(window: str) -> str:
    """A described window as words after a verb: "in last May: …", but "in May: …" (never
    "in in May") and "before the trip: …" as the question said them."""
    first = window.split(maxsplit=1)[0].casefold() if window.strip() else ""
    return window if first in _RELATING else f"in {window}"


@dataclass
class Hit:
    """One record found. `id` is the record's rowid in its owner table; `source` the `Scope` it
    came from (ids are unique only inside one); `type` its kind (`KINDS`).

    score: the relevance, 0–1 (see the module docstring); until `retrieve` scores the hits it
    is the working score of the fusion. Parts: lex_rank / lex_score (position and BM25, higher
    is better; library-wide term statistics when several collections are searched), lex_source
    ("bm25" or "trigram": a substring top-up), vec_rank / vec_distance (position and cosine
    distance to the query as embedded), keyword_match (every typed word verbatim), fusion and
    fused (the fusion that ranked the lists and its score, levers included), lexical (how much
    of the query's BM25 weight the record holds, 0–1), held (the share of the query's Σ IDF
    whose terms the index matched in the record, however often, or a lever found it holds:
    `matched`, which the JSON leaves out), rare (the query's rare terms among them, `_lexical.rare`), evidence (why the floor kept a hit less relevant than itself,
    `_lexical.evident`), lifts (what each lever added to `fused`).
    part: the key that found a record found through its parts (a note's example, `parents`).
    window: the time the question named, when the hit was found in it (`_time_window`).
    """

    id: int
    score: float = 0.0
    type: str = "record"
    source: int = 0
    lex_rank: int | None = None
    lex_score: float | None = None
    lex_source: str | None = None
    vec_rank: int | None = None
    vec_distance: float | None = None
    keyword_match: bool = False
    fusion: str | None = None
    fused: float | None = None
    lexical: float | None = None
    held: float | None = None
    matched: frozenset[str] | None = field(default=None, metadata={"shown": False})
    rare: tuple[str, ...] = ()
    evidence: str | None = None
    lifts: dict[str, float] = field(default_factory=dict)
    # what the record is, filled by its owner after ranking
    text: str = ""
    created_at: str | None = None
    weight: float | None = None
    tags: list[str] | None = None
    session: str | None = None
    speaker: str | None = None
    collection: str | None = None
    path: str | None = None
    line: int | None = None
    heading: str | None = None
    match: str | None = None
    part: int | None = None
    mtime: float | None = None
    window: str | None = None

    @property
    def key(self) -> tuple[int, int]:
        """(source, id): unique across the scopes of one search."""
        return self.source, self.id

    @property
    def location(self) -> str:
        """Where the hit is: `path:line` for a note, else `<type> <id>`."""
        if self.path is not None:
            return f"{self.path}:{self.line or 1}"
        return f"{self.type} {self.id}"

    def copy(self, **changes: Any) -> Hit:
        """A copy with `changes` (cheaper than `dataclasses.replace`, which runs `__init__` on
        every field: the candidate stages copy every hit once)."""
        new = object.__new__(Hit)
        new.__dict__.update(self.__dict__)
        new.lifts = dict(self.lifts)
        new.__dict__.update(changes)
        return new

    def absorb(self, other: Hit) -> None:
        """Copy the score parts `other` knows into this hit (through the instance dicts: the
        fusion absorbs every hit found by both lists)."""
        mine, theirs = self.__dict__, other.__dict__
        for name in _PARTS:
            if mine[name] is None:
                mine[name] = theirs[name]
        self.keyword_match = self.keyword_match or other.keyword_match
        self.rare = self.rare or other.rare

    def explain(self) -> str:
        """How the relevance was made, for people, the same in every driver:
        "relevance 0.82 · bm25 #1 7.12 · cosine 0.861 #3 · keyword · dates +0.010"."""
        out = [f"relevance {self.score:.2f}"]
        if self.lex_rank is not None:
            out.append(f"{self.lex_source or 'bm25'} #{self.lex_rank} {self.lex_score or 0.0:.2f}")
        if self.vec_distance is not None:
            rank = f" #{self.vec_rank}" if self.vec_rank is not None else ""
            out.append(f"cosine {1.0 - self.vec_distance:.3f}{rank}")
        if self.keyword_match:
            out.append("every word verbatim")
        if self.evidence:
            out.append(f"kept under the floor: {self.evidence}")
        out += [f"{name} +{value:.3f}" for name, value in self.lifts.items() if value > 0]
        if self.window is not None:
            out.append(during(self.window))
        return " · ".join(out)

    def to_dict(self) -> dict[str, Any]:
        """The hit for JSON: its score, parts and explanation, and the fields its kind has."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if (f.name in _ABOUT and value is None) or not f.metadata.get("shown", True):
                continue
            out[f.name] = list(value) if isinstance(value, list) else value
        out["lifts"] = dict(self.lifts)
        if self.path is not None:
            out["location"] = self.location
        out["explain"] = self.explain()
        return out


@dataclass(frozen=True)
class Policy:
    """How one use of search ranks: built from `Settings` by the composition root, never copied.
    Every stage of `retrieve` reads its setting here.

    Candidates: lists ("lex", "vec": which candidate lists to take; a list left out still has
    its parts filled in for the fusion), depth (candidates per list; None: max(4k, 40)),
    trigram ("top_up": substring matches when BM25 finds too few, "fallback": only when it finds
    none), literal_dashes ('-t', '--clean' are words to find, not exclusions), stop_words (a
    query's stop and question words never carry a match when two other words remain), centre
    (rank the vector list by the query less its language's mean, `_centre`).
    Fusion: "rrf" (Σ w/(rrf_k + rank) with `weights` (lexical, vector); ties "competition" lets
    equal raw scores share a rank), "weighted" (cosine + `boost` for a verbatim keyword match +
    `lex_share` × BM25/best), "convex" (α · BM25/best + (1 − α) · min–max cosine + `boost`);
    trust scales the lexical list's weight by the coverage² of the query by its best hit, never
    below `trust_floor` (`_lexical`); scripts: a question in another script than the records
    (some script of its terms is absent from the index: "Как зовут собак Джеймса?" over English
    turns) has its lexical list weighted by the share² of its terms in the index's scripts and
    its vector centred (`_lexical.scripts`, `_centre`) — an English query over English records is
    never touched.
    Levers (0 = off): date_weight, memory_weight (keys the owner passes: the turns said at the
    time a question names; the source turns of matching memories), speaker_weight (a mark: the
    turns of a speaker the question names, lifted by that share of their score), answer_weight and
    answer_demote (a question found passes that share of its score to the record that answers
    it, and loses the demote share: `_levers.Answer`), own_weight (the first candidates lifted
    by that share of the best score × the share of the query their own text holds, not only
    their lexical key: `_levers.credited`), neighbour_weight (read by the owner's `Near` lever:
    the first candidates lifted by how near the query their neighbours' stored vectors are),
    reply_weight (read by the owner's `Reply` lever: a statement asked about and the question
    between pass relevance to the reply), number_weight (a question asking when or how much:
    the first hits saying a time or a number gain that share of the best relevance,
    `_levers.measured`), session_weight (the
    session-level list: a session as near as its nearest turns), session_cap (diversity: at
    most that many hits of one group before every other group had its turn); window (the
    time-window stage, `_time_window`: 0 off, a lift weight for the records of the time a
    question names, or "restrict" to them, falling back to any time when none is relevant).
    Score: kind (whose calibration turns the parts into a relevance, `_score`); floor (the
    relevance below which a hit is left out; 0 = none); truncate (score-adaptive truncation:
    stop where the relevance falls below this share of the best hit's; 0 = off).
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
    lists: tuple[str, ...] = ("lex", "vec")
    lex_share: float = 0.0
    trust: bool = False
    trust_floor: float = 0.0
    scripts: bool = False
    date_weight: float = 0.0
    memory_weight: float = 0.0
    speaker_weight: float = 0.0
    answer_weight: float = 0.0
    answer_demote: float = 0.0
    own_weight: float = 0.0
    neighbour_weight: float = 0.0
    reply_weight: float = 0.0
    number_weight: float = 0.0
    session_weight: float = 0.0
    session_cap: int = 0
    window: float | Literal["restrict"] = 0.0
    kind: str = "record"
    floor: float = 0.0
    truncate: float = 0.0

    def depth_for(self, k: int) -> int:
        return self.depth or max(k * 4, 40)


@dataclass(frozen=True)
class Signals:
    """What a search's candidates say together (see the module docstring); the same whatever
    order the hits are put in."""

    top: float = 0.0
    top_cos: float = 0.0
    cos_z: float = 0.0
    gap: float = 0.0
    held: float = 0.0
    #: the share of the query's weight on words no record holds, by how many records lack them
    absent: float = 0.0
    #: how many candidates had a cosine (the spread `cos_z` and `gap` read)
    n: int = 0
    #: False: the kind's gate found no answer here (the floor kept only its evidence)
    answers: bool = True

    @classmethod
    def of(cls, hits: Sequence[Hit]) -> Signals:
        if not hits:
            return cls()
        cos = [1.0 - h.vec_distance for h in hits if h.vec_distance is not None]
        top_cos, z, gap = 0.0, 0.0, 0.0
        if cos:
            top_cos = max(cos)
            mean = sum(cos) / len(cos)
            sd = math.sqrt(sum((c - mean) ** 2 for c in cos) / len(cos))
            gap = top_cos - mean
            z = gap / sd if sd > 1e-9 else 0.0
        return cls(
            top=max(h.score for h in hits),
            top_cos=top_cos,
            cos_z=z,
            gap=gap,
            held=max((h.held or 0.0) for h in hits),
            n=len(cos),
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "top": round(self.top, 6),
            "top_cos": round(self.top_cos, 6),
            "cos_z": round(self.cos_z, 4),
            "gap": round(self.gap, 6),
            "held": round(self.held, 4),
            "absent": round(self.absent, 4),
            "n": self.n,
        }


@dataclass
class SearchResult:
    """What one search found, best first by relevance, and what it could not do.

    hits: the results (every kind in one list, by `score`); mode: what ran ("lex" when there was
    no query vector); warnings: one line each, for the user; floor / left_out: the relevance
    floor and how many hits it left out (an empty list then means "nothing relevant": see
    `reason`). The library fills in what it searched: query, scope, collections, whether it
    caught up with edits first (caught_up, fresh_by: "stat" every note statted, "folders" only
    the folders, the notes `stat_age` seconds before, "watcher", "none") and how long it took.
    """

    hits: list[Hit]
    mode: str = "hybrid"
    warnings: list[str] = field(default_factory=list)
    floor: float = 0.0
    left_out: int = 0
    query: str = ""
    scope: str = ""
    collections: list[str] = field(default_factory=list)
    expensive: bool = False
    caught_up: int = 0
    fresh_by: str = ""
    stat_age: float = 0.0
    seconds: float = 0.0
    signals: Signals | None = None

    @property
    def reason(self) -> str | None:
        """Why the list is empty, in one line (None when it is not)."""
        if self.hits:
            return None
        if self.left_out:
            return f"nothing relevant: {self.left_out} result(s) {self.under()}"
        return "nothing relevant: no record matches the query's words or meaning"

    @property
    def flat(self) -> bool:
        """The kind's answer gate found no answer among the hits: nothing stood out from the
        rest (`_answer`), so the floor kept only its evidence."""
        return self.signals is not None and not self.signals.answers

    def under(self) -> str:
        """What the results left out were under, the same words on every surface."""
        gate = " or standing out too little from the rest" if self.flat else ""
        return f"less relevant than the relevance floor {self.floor:.2f}{gate}"

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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "hits": [h.to_dict() for h in self.hits],
            "warnings": list(self.warnings),
            "mode": self.mode,
            "floor": self.floor,
            "left_out": self.left_out,
            "reason": self.reason,
        }
        if self.scope:  # a library search: what it searched and how fresh
            out.update(
                query=self.query,
                scope=self.scope,
                collections=list(self.collections),
                expensive=self.expensive,
                caught_up=self.caught_up,
                fresh_by=self.fresh_by,
                stat_age=self.stat_age,
                seconds=self.seconds,
            )
        return out
