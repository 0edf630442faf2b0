"""`retrieve`: the one retrieval path. Memory, the library, its router, the profile, injection
and the backfill all call it; every ranking stage is here, each configured by the `Policy`:

1. parse the query (stop and question words never carry a match, `_query`);
2. candidates: each scope's lexical list, then its vector list (so a query vector still being
   embedded on the query thread arrives meanwhile; `Policy.lists`, `depth`, `centre`);
3. lexical statistics: BM25 again with the term statistics of every scope searched, and each
   candidate's lexical evidence (`_lexical`);
4. aggregation: a part is already its record (the index keeps a record's nearest part); keys
   collapse to their parent records (`parents`: a note's examples to their chunk), per list;
5. merge the scopes (BM25 descending, distance ascending) and fuse the two lists (`_fusion`),
   the lexical list weighted by how much of the query its best hit covers (`trust`) and by the
   share of the query's terms in the records' scripts (`scripts`: a question in Russian over
   English turns rests on its vector, centred);
6. levers: keys that lift the records they point at (dates, memory keys), marks that lift the
   candidates the question names (a speaker), answers (a question found passes part of its
   score to the record that answers it), the records whose own words hold the query's, and the
   session-level list (`_levers`); then the
   time window a question names lifts (or restricts the list to) the records of that time
   (`_time_window`);
7. score: each hit's relevance, 0–1 (`_score`), which orders the list (equal scores: the more
   recent record first, `recency`); on the first hits, a statement asked about passes
   relevance to its reply (`_levers.Reply`), and a question asking for a time or a number
   lifts those that say one (`_levers.measured`);
8. the floor (`Policy.floor`), diversity (`session_cap`) and score-adaptive truncation.

When the mode needs vectors but there is no query vector (no embedder, or it is down) the search
runs lexically and says so once. The index is typed by the `Candidates` protocol, which
`TextIndex` satisfies, so this module does not import `_index` (whose `search` delegates here).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Literal, Protocol

import numpy as np

from tideline.search._analyse import Analyser, analyse
from tideline.search._centre import centre_query, raw_distances
from tideline.search._fallback import QueryVector, resolved
from tideline.search._fusion import fuse, lex_norm, ranks
from tideline.search._hits import SCORE_PLACES, Hit, Mode, Policy, SearchResult, Signals
from tideline.search._levers import (
    ASKS_NUMBER,
    Answer,
    Groups,
    Key,
    Lever,
    Mark,
    Near,
    Reply,
    answered,
    boost,
    credited,
    diversify,
    lift,
    measured,
    nearer,
    replied,
    says_number,
    session_scores,
)
from tideline.search._lexical import (
    Counts,
    Freqs,
    Lexicon,
    evident,
    fts_form,
    lexicon,
    own_share,
    rescore,
    trust,
)
from tideline.search._query import ParsedQuery, has_word, parse_query
from tideline.search._score import gate_for, score, truncated
from tideline.search._time_window import RESTRICT, TimeWindow, nothing_in, within

#: The owner's lookup of record texts by id (for verbatim keyword checks on a few candidates).
TextLookup = Callable[[Sequence[int]], Mapping[int, str]]
#: Aggregation: (scope number, ids) → each id's parent record (a key's chunk; itself if none).
Parents = Callable[[int, Sequence[int]], Mapping[int, int]]
#: The owner's recency of records, by (source, id): the more recent wins among equal scores.
Recency = Callable[[Sequence[tuple[int, int]]], Mapping[tuple[int, int], float]]

#: How many of the best candidates the own-words lever reads (their texts are looked up).
OWN_DEPTH = 30
#: How many the neighbours lever orders: the first page only (its lifts never bring a record
#: into it; lifting the first 30 cost LoCoMo multi-hop recall@10 two points for no Hit@1).
NEAR_DEPTH = 10

NO_EMBEDDER = "no embedder configured: vector search is off, showing lexical results"


class Candidates(Protocol):
    """What `retrieve` needs from an index (`TextIndex` has it)."""

    #: The lexical analyser that made the index's terms (the query is cut the same way).
    analyser: Analyser

    @property
    def model_id(self) -> str | None:
        """The model behind the index's vectors (None before any are bound): picks the query
        centring (`_centre`) and the calibration (`_score`)."""
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

    def term_counts(self, terms: Sequence[str]) -> Counts | None: ...

    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None: ...


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


def parsed_for(query: str, policy: Policy, analyser: Analyser = "plain") -> ParsedQuery:
    """The query as `retrieve` parses it under `policy` (a search and its levers' keys parse
    the same text: parsed once)."""
    return _parsed(query, policy.literal_dashes, policy.stop_words, analyser)


@lru_cache(maxsize=256)
def _parsed(query: str, dashes: bool, stop_words: bool, analyser: Analyser) -> ParsedQuery:
    return parse_query(literal_dashes(query) if dashes else query, analyser, stop_words=stop_words)


@dataclass
class _Fused:
    """Stages 1–5 of one search: the fused candidates, what ran, and the query vector."""

    hits: list[Hit]
    mode: Mode
    warnings: list[str]
    vector: np.ndarray | None
    words: Lexicon | None = None


def _scopes(scopes: Candidates | Scope | Sequence[Scope]) -> list[Scope]:
    if isinstance(scopes, Scope):
        return [scopes]
    if isinstance(scopes, Sequence):
        return list(scopes)
    return [Scope(scopes)]


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
    keys: Sequence[Lever] = (),
    parents: Parents | None = None,
    groups: Groups | None = None,
    recency: Recency | None = None,
    window: TimeWindow | None = None,
) -> SearchResult:
    """Search `scopes` for `query` (and its vector `qvec`) through every stage (see the module
    docstring) and return the hits that clear the floor, best first by relevance.

    `k` is how many results the caller shows: it sets the candidate depth (`Policy.depth`) and
    which hits count as "left out" by the floor; every hit that clears it is returned.
    `texts` (one scope only) lets the fusions check verbatim keywords in Python instead of on
    the trigram table. `warning` is what the caller's `query_vector` said when the embedder was
    down. `qvec` may still be under way (`pending_vector`): the lexical lists are searched
    before it is waited for. `keys`, `groups` (a record's session) and `parents` are the
    owner's knowledge for the levers and the aggregation; `recency` (of (source, id) keys)
    orders equal scores. `window` is the time the question names, with the owner's scope
    narrowed to it (`_time_window`; used when `Policy.window` is on).
    """
    if not has_word(query):  # `"` or `?!`: no word to find, no meaning to be near (#37)
        return SearchResult([], mode, [], policy.floor, 0)
    texts = _remembered(texts) if texts is not None else None
    found = _fused(_scopes(scopes), query, qvec, k, mode, policy, texts, warning, parents)
    hits = found.hits
    first = _scopes(scopes)[0].index
    for key in keys:
        if not key.weight or isinstance(key, Near | Reply):
            continue
        if isinstance(key, Answer):
            hits = answered(hits, key)
        elif isinstance(key, Mark):
            marked = key.marked([h.id for h in hits if h.source == 0])
            hits = boost(hits, marked, key.weight, key.name)
        else:
            hits = _keyed(hits, key, query, found, k, policy)
            if key.holds and found.words is not None:
                _holding(hits, key, found.words, first.analyser)
    if policy.own_weight and texts is not None and found.words is not None and hits:
        hits = _own_words(hits, texts, first.analyser, found.words, policy.own_weight)
    known = _Known()
    replies = [key for key in keys if isinstance(key, Reply) and key.weight]
    for key in keys:  # after every lift: the first candidates are the ones it reads
        if isinstance(key, Near) and key.weight and found.vector is not None:
            hits = _near(hits, key, first, found.vector, known, replies)
    if policy.session_weight and groups is not None and hits:
        hits = _sessions(hits, groups, policy)
    fallback: list[Hit] | None = None
    if window is not None and policy.window:
        hits, fallback = _windowed(hits, window, query, found, k, policy)
    indexes = [s.index for s in _scopes(scopes)]
    top = _Top(replies, bool(policy.number_weight) and ASKS_NUMBER.search(query) is not None)
    kept, left_out, signals = _floored(indexes, hits, found, k, policy, recency, texts, top, known)
    if fallback is not None and not kept and window is not None:
        kept, left_out, signals = _floored(indexes, fallback, found, k, policy, recency, texts, top)
        found.warnings.append(nothing_in(window))
    if policy.session_cap and groups is not None:
        head = kept[: k * 2]
        kept = diversify(head, groups([h.id for h in head]), policy.session_cap)
    kept = truncated(kept, policy.truncate)
    return SearchResult(kept, found.mode, found.warnings, policy.floor, left_out, signals=signals)


def _floored(
    indexes: Sequence[Candidates],
    hits: list[Hit],
    found: _Fused,
    k: int,
    policy: Policy,
    recency: Recency | None,
    texts: TextLookup | None,
    top: _Top | None = None,
    known: _Known | None = None,
) -> tuple[list[Hit], int, Signals]:
    """Stage 7 and the floor: the hits scored and ordered (and the levers on the first of
    them, `top`), those that clear the floor or are evidence it respects (`_lexical.evident`: a
    rare word matched, first in both lists), and how many of the first `k` it left out."""
    model = indexes[0].model_id if indexes else None
    _distances(indexes, hits, found.vector, known)
    score(hits, policy.kind, model, found.vector is not None)
    recent = recency([h.key for h in hits]) if recency is not None else None
    hits = _ordered(hits, recent)
    for reply in top.replies if top is not None else ():
        hits = _ordered(_replied(indexes, hits, reply, found, policy, known), recent)
    if top is not None and top.numbers and texts is not None:
        hits = _ordered(
            measured(hits, _saying(texts), policy.number_weight, "time or number"), recent
        )
    if texts is not None and indexes:
        _own_rare(hits, texts, indexes[0].analyser)
    signals = Signals.of(hits)
    if found.words is not None:
        signals = replace(signals, absent=found.words.absent)
    if policy.floor <= 0:
        return hits, 0, signals
    gate = gate_for(model, policy.kind) if found.vector is not None else None
    if gate is not None and not gate.answers(signals):
        signals = replace(signals, answers=False)
    cleared: list[bool] = []
    for h in hits:
        if h.score < policy.floor or not signals.answers:
            h.evidence = evident(h)
        cleared.append((h.score >= policy.floor and signals.answers) or h.evidence is not None)
    kept = [h for h, ok in zip(hits, cleared, strict=True) if ok]
    return kept, sum(1 for ok in cleared[:k] if not ok), signals


@dataclass(frozen=True)
class _Top:
    """The levers on the first hits by relevance, after the score stage: the replies
    (`_levers.Reply`), and whether the question asks for a time or a number (`measured`)."""

    replies: list[Reply]
    numbers: bool


def _saying(texts: TextLookup) -> Callable[[Sequence[int]], set[int]]:
    """Which of these records say a time or a number, in their own words."""

    def says(ids: Sequence[int]) -> set[int]:
        return {i for i, text in texts(ids).items() if says_number(text)}

    return says


def _replied(
    indexes: Sequence[Candidates],
    hits: list[Hit],
    reply: Reply,
    found: _Fused,
    policy: Policy,
    known: _Known | None = None,
) -> list[Hit]:
    """The reply lever (`_levers.replied`); a reply not among the candidates joins with what
    it is given alone (its distance to the query read from the index, for the "why")."""
    fusion = hits[0].fusion if hits else None

    def new(i: int) -> Hit:
        hit = Hit(i, type=policy.kind, fusion=fusion, fused=0.0)
        _distances(indexes[:1], [hit], found.vector, known)
        return hit

    return replied(hits, reply, new)


def _own_rare(hits: list[Hit], texts: TextLookup, analyser: Analyser) -> None:
    """The rare terms a hit holds in its own words: a turn's lexical key holds its neighbours
    too (`RawTurns.lexical_keys`), so a word said once matches five records; only the turn
    that said it is evidence."""
    holders = [h for h in hits if h.rare]
    if not holders:
        return
    own = texts([h.id for h in holders])
    for h in holders:
        words = _terms(own.get(h.id, ""), analyser)
        h.rare = tuple(t for t in h.rare if all(w in words for w in t.split()))


def _remembered(texts: TextLookup) -> TextLookup:
    """`texts` looking each record up once per search (the keyword check, the own-words lever
    and the rare words' check read the same candidates)."""
    known: dict[int, str] = {}
    asked: set[int] = set()

    def look(ids: Sequence[int]) -> Mapping[int, str]:
        missing = [i for i in ids if i not in asked]
        if missing:
            known.update(texts(missing))
            asked.update(missing)
        return {i: known[i] for i in ids if i in known}

    return look


def _own_words(
    hits: list[Hit], texts: TextLookup, analyser: Analyser, words: Lexicon, weight: float
) -> list[Hit]:
    """The own-words lever (`_levers.credited`) on the first `OWN_DEPTH` candidates."""
    head = [h.id for h in hits[:OWN_DEPTH] if h.source == 0]
    own = texts(head)
    share = {i: own_share(words, _terms(own.get(i, ""), analyser)) for i in head}
    return credited(hits, share, weight, "own words")


@lru_cache(maxsize=8192)
def _terms(text: str, analyser: Analyser) -> frozenset[str]:
    """A record's own text as its index stores it, a set of terms (the same turns come back
    search after search: analysed once)."""
    return frozenset(fts_form(analyse(text, analyser)).split())


@dataclass
class _Known:
    """Distances of the first index's records to the query already read in this search, and
    which were asked (a record without a vector is asked once too): `_near` reads, with the
    neighbours', those of the candidates that have none yet, which the score reads next
    (`_distances`) — one statement on PostgreSQL, not two (issue 34)."""

    asked: set[int] = field(default_factory=set)
    found: dict[int, float] = field(default_factory=dict)


def _near(
    hits: list[Hit],
    key: Near,
    index: Candidates,
    qvec: np.ndarray,
    read: _Known,
    replies: Sequence[Reply] = (),
) -> list[Hit]:
    """The neighbours lever (`_levers.nearer`) on the first `NEAR_DEPTH` candidates: their
    neighbours' stored vectors, read from the index's copy (no embedding). Read with them
    (`read`): the candidates' without a distance yet and their replies' (`replies`) that are
    not candidates, which the score and the reply lever ask for next."""
    head = [h.id for h in hits[:NEAR_DEPTH] if h.source == 0]
    around = key.neighbours(head)
    mine = {h.id for h in hits if h.source == 0}
    lacking = {h.id for h in hits if h.source == 0 and h.vec_distance is None}
    for reply in replies:
        lacking |= {a for _, a in reply.replies(sorted(mine)).values()} - mine
    wanted = sorted({n for near in around.values() for n in near} | lacking)
    known = index.distances(qvec, wanted)
    read.asked.update(wanted)
    read.found.update(known)
    nearest: dict[int, float] = {}
    for i, near in around.items():
        cosines = [1.0 - known[n] for n in near if n in known]
        if cosines:
            nearest[i] = max(cosines)
    return nearer(hits, nearest, key.weight, key.name)


def _ordered(hits: list[Hit], recency: Mapping[tuple[int, int], float] | None) -> list[Hit]:
    """By relevance; equal ones the more recent first, then as the fusion ordered them."""
    recent = recency or {}
    return sorted(hits, key=lambda h: (-round(h.score, SCORE_PLACES), -recent.get(h.key, 0.0)))


def _fused(
    scopes: list[Scope],
    query: str,
    qvec: QueryVector,
    k: int,
    mode: Mode,
    policy: Policy,
    texts: TextLookup | None,
    warning: str | None,
    parents: Parents | None,
) -> _Fused:
    """Stages 1–5: parse, candidates, lexical statistics, aggregation, merge and fusion."""
    parsed = parsed_for(query, policy, scopes[0].index.analyser if scopes else "plain")
    depth = policy.depth_for(k)
    lexical = mode != "vec" and ("lex" in policy.lists or mode == "lex")
    # The lexical lists and the query's term statistics first: a vector still being computed
    # (`pending_vector`) arrives meanwhile.
    lex = _lexical(scopes, parsed, depth, policy) if lexical else []
    words = lexicon([s.index for s in scopes], parsed)
    qvec, down = resolved(qvec) if mode != "lex" else (None, None)
    warnings: list[str] = []
    if mode != "lex" and qvec is None:
        note = warning or down or (NO_EMBEDDER if mode == "vec" else None)
        warnings += [note] if note else []
        lex = lex if mode == "hybrid" and lexical else _lexical(scopes, parsed, depth, policy)
        mode = "lex"
    raw = qvec
    # a question in another script than the records: its vector says "a question in Russian"
    # as much as what it asks, so it is centred whatever `centre` says (`Policy.scripts`)
    foreign = policy.scripts and words is not None and words.foreign
    if (policy.centre or foreign) and qvec is not None and scopes:
        qvec = centre_query(qvec, scopes[0].index.model_id)
    vec: list[list[Hit]] = []
    if mode in ("hybrid", "vec") and qvec is not None and ("vec" in policy.lists or mode == "vec"):
        for n, s in enumerate(scopes):
            found = s.index.vector(qvec, depth, s.where, s.params)
            vec.append([h.copy(source=n) for h in found])
    cover = rescore(lex, vec, [s.index for s in scopes], parsed, words) if words else None
    best: dict[tuple[int, int], tuple[int, int]] = {}
    if parents is not None:
        lex, vec, best = _collapsed(lex, vec, parents, policy)
    lex_all = _merged(lex, lambda h: -(h.lex_score or 0.0), "lex_rank", policy)
    vec_all = _merged(vec, lambda h: h.vec_distance or 0.0, "vec_rank", policy)
    if mode == "lex":
        hits = lex_all
        norm = lex_norm(hits)  # BM25 / the best, substring top-ups below the weakest BM25 hit
        for h in hits:
            h.score = norm.get(h.key, 0.0)
    elif mode == "vec":
        hits = vec_all
        for h in hits:
            h.score = 1.0 - (h.vec_distance or 0.0)  # by the query as searched (centred or not)
    else:
        if policy.fusion in ("weighted", "convex"):
            assert qvec is not None
            _annotate(scopes, parsed, qvec, lex_all + vec_all, texts)
        lists = [lex_all, vec_all] if lex_all or "lex" in policy.lists else [vec_all]
        if len(lists) == 2:
            policy = _trusted(policy, cover, words)
        hits = fuse(lists, policy)
    if raw is not None and qvec is not raw:  # hits show (and the score reads) the raw cosine
        raw_distances([s.index for s in scopes], hits, raw)
    for h in hits:
        part = best.get(h.key)
        h.part = part[1] if part is not None and part != h.key else None
    return _Fused(hits, mode, warnings, raw, words)


def _trusted(policy: Policy, cover: float | None, words: Lexicon | None) -> Policy:
    """The policy with the lexical list's weight (RRF) and share (convex) scaled by how far it
    can be trusted: the coverage² of its best hit (`Policy.trust`), the share² of the query's
    terms in a script the index holds (`Policy.scripts`)."""
    scale = trust(cover, policy.trust_floor) if policy.trust else 1.0
    if policy.scripts and words is not None:
        scale *= words.known**2
    if scale == 1.0:
        return policy
    w_lex, w_vec = policy.weights
    return replace(policy, weights=(w_lex * scale, w_vec), alpha=policy.alpha * scale)


def _lexical(
    scopes: Sequence[Scope], parsed: ParsedQuery, depth: int, policy: Policy
) -> list[list[Hit]]:
    """Each scope's lexical list, its hits tagged with the scope."""
    out: list[list[Hit]] = []
    for n, s in enumerate(scopes):
        found = s.index.lexical(parsed, depth, s.where, s.params, trigram=policy.trigram)
        out.append([h.copy(source=n) for h in found])
    return out


def _merged(
    lists: list[list[Hit]],
    order: Callable[[Hit], float],
    rank_field: Literal["lex_rank", "vec_rank"],
    policy: Policy,
) -> list[Hit]:
    """One list from the scopes' lists: a single scope keeps its order, several are merged by
    score (stable: scope order breaks ties); ranks are renumbered by the policy's tie rule."""
    if not lists:
        return []
    merged = lists[0] if len(lists) == 1 else sorted((h for x in lists for h in x), key=order)
    # The hits are retrieve's own copies (made once per hit, with `source`): ranked in place.
    for hit, rank in zip(merged, ranks(merged, policy.ties), strict=True):
        setattr(hit, rank_field, rank)
    return list(merged)


def _collapsed(
    lex: list[list[Hit]], vec: list[list[Hit]], parents: Parents, policy: Policy
) -> tuple[list[list[Hit]], list[list[Hit]], dict[tuple[int, int], tuple[int, int]]]:
    """Aggregation: each scope's lists with every key replaced by its parent record (the
    first, best key of each parent kept), and each parent's best key — the one with the best
    reciprocal-rank score of its own across both lists (a note's `match`)."""
    n_scopes = max(len(lex), len(vec))
    parent: dict[tuple[int, int], tuple[int, int]] = {}
    for n in range(n_scopes):
        ids = {h.id for x in (lex, vec) if n < len(x) for h in x[n]}
        parent.update(((n, i), (n, p)) for i, p in parents(n, sorted(ids)).items())
    own: dict[tuple[int, int], float] = {}
    for lists in (lex, vec):
        for hits in lists:
            for pos, h in enumerate(hits, 1):
                own[h.key] = own.get(h.key, 0.0) + 1.0 / (policy.rrf_k + pos)
    best: dict[tuple[int, int], tuple[int, int]] = {}
    for key, value in own.items():
        if key not in parent:
            continue
        group = parent[key]
        if group not in best or value > own[best[group]]:
            best[group] = key

    def collapse(hits: list[Hit]) -> list[Hit]:
        seen: set[tuple[int, int]] = set()
        out: list[Hit] = []
        for h in hits:
            group = parent.get(h.key)
            if group is None or group in seen:  # gone meanwhile, or a later key of one parent
                continue
            seen.add(group)
            h.source, h.id = group  # each hit is in one list only: renamed in place
            out.append(h)
        return out

    return [collapse(x) for x in lex], [collapse(x) for x in vec], best


def _annotate(
    scopes: Sequence[Scope],
    parsed: ParsedQuery,
    qvec: np.ndarray,
    hits: list[Hit],
    texts: TextLookup | None,
) -> None:
    """For the weighted and convex fusions: mark verbatim keyword matches and fill in the
    distance of lexical-only candidates, per scope."""
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


def _distances(
    indexes: Sequence[Candidates],
    hits: list[Hit],
    qvec: np.ndarray | None,
    read: _Known | None = None,
) -> None:
    """Every hit that has a vector gets its distance to the query (the score reads it); those
    of the first index `read` already are not asked again."""
    if qvec is None:
        return
    by_source: dict[int, list[Hit]] = {}
    for h in hits:
        if h.vec_distance is None:
            by_source.setdefault(h.source, []).append(h)
    for n, mine in by_source.items():
        if n < len(indexes):
            ready = read if read is not None and n == 0 else _Known()
            ask = [h.id for h in mine if h.id not in ready.asked]
            known = {**ready.found, **(indexes[n].distances(qvec, ask) if ask else {})}
            for h in mine:
                h.vec_distance = known.get(h.id)


def _keyed(
    hits: list[Hit], key: Key, query: str, found: _Fused, k: int, policy: Policy
) -> list[Hit]:
    """Lift `hits` by a key's search (see `_levers`)."""
    scope = key.scope
    if not isinstance(scope, Scope):
        raise TypeError(f"key {key.name}: scope must be a Scope")
    mode: Mode = "lex" if found.vector is None else found.mode
    sub = _fused(
        [scope], query, found.vector, k, mode, key.policy or policy, key.texts, None, None
    ).hits[:k]
    extra: dict[int, float] = {}
    if key.targets is None:
        extra = {h.id: h.score for h in sub}
    else:
        score_of = {h.id: h.score for h in sub}
        for i, targets in key.targets([h.id for h in sub]).items():
            for t in targets:
                extra[t] = max(extra.get(t, 0.0), score_of.get(i, 0.0))
    return lift(hits, extra, key.weight, key.name)


def _holding(hits: list[Hit], key: Key, words: Lexicon, analyser: Analyser) -> None:
    """The records `key` lifted hold its words (`Key.holds`, a date phrase) besides those the
    index matched: their `held` gains the share of the query's Σ IDF those words carry."""
    terms = _terms(key.holds, analyser)
    phrase = {t for t in words.terms if all(w in terms for w in t.split())}
    for h in hits if phrase else ():
        if h.lifts.get(key.name):
            extra = phrase - (h.matched or frozenset())
            h.matched = (h.matched or frozenset()) | extra
            h.held = min(1.0, (h.held or 0.0) + sum(words.idfs[t] for t in extra) / words.total)


def _windowed(
    hits: list[Hit], window: TimeWindow, query: str, found: _Fused, k: int, policy: Policy
) -> tuple[list[Hit], list[Hit] | None]:
    """The time-window stage (see `_time_window`): the narrowed scope searched with the same
    query; its first `k` hits lift (all of them, when restricting, say what is in the window)."""
    scope = window.scope
    if not isinstance(scope, Scope):
        raise TypeError("time window: scope must be a Scope")
    mode: Mode = "lex" if found.vector is None else found.mode
    inside = _fused([scope], query, found.vector, k, mode, policy, window.texts, None, None).hits
    return within(hits, inside if policy.window == RESTRICT else inside[:k], window, policy.window)


def _sessions(hits: list[Hit], groups: Groups, policy: Policy) -> list[Hit]:
    """The session-level list (see `_levers`): sessions ranked by their best turns, fused like
    the turns, lift each turn by its session's fused score."""
    group: Mapping[int, Hashable] = groups([h.id for h in hits])
    stand_in = session_scores(hits, group)
    lex = sorted(
        (h for h in stand_in.values() if h.lex_score is not None), key=lambda h: -(h.lex_score or 0)
    )
    vec = sorted(
        (h for h in stand_in.values() if h.vec_distance is not None),
        key=lambda h: h.vec_distance or 0.0,
    )
    for n, h in enumerate(lex, 1):
        h.lex_rank = n
    for n, h in enumerate(vec, 1):
        h.vec_rank = n
    fused = {h.id: h.score for h in fuse([lex, vec], policy)}
    by_group = {group.get(i, i): s for i, s in fused.items()}
    extra = {h.id: by_group.get(group.get(h.id, h.id), 0.0) for h in hits}
    return lift(hits, extra, policy.session_weight, "sessions")
