"""The levers: what the owner knows and the candidate lists do not, as stages of `retrieve`.

- `Key`: another way to the records. Its scope is searched with the same query and each hit
  found there lifts the records it points at (`targets`; default: the same ids) — the turns said
  at the time a question names (the same index narrowed to those days), the source turns of the
  memories that match (the narratives' index). `lift` adds the second search's scores to the
  first's, rescaled so its best equals `weight` × the first's best, whatever fusion made either;
  records only the key found join the list. A key may hold words of the query (`holds`):
  the turns said at the time a question names hold its date ("in April 2022") though their
  text does not, so the records it lifts count those words as held (`Hit.held`, which the
  floor's answer gate reads: a dated question's answer matched only its other words).
- `Mark`: a lever without a search. The owner marks the candidates that hold something the
  question names (the turns of a speaker it names: "What did Caroline research?" — on LoCoMo
  97% of the evidence of a question naming one speaker is that speaker's), and `boost` lifts
  each by `weight` × its own score.
- `Answer`: a lever without a search either. The owner says which candidates are questions and
  which record answers each (a turn ending in "?" and the next turn of its session by another
  speaker); a question found passes `weight` × its own score to its answer (which joins the list
  if absent), and is itself demoted by `demote` × its score — the reply holds what was asked
  about ("What's their name?" — "Pickle"), the question only the asker's words.
- own words (`Policy.own_weight`, `credited`): a record whose own text holds the query's
  words, not only its lexical key (a turn's key holds its neighbours' words too,
  `RawTurns.lexical_keys`, so the turn that said them and the four around it match alike): each
  of the first candidates is lifted by `weight` × the share of the query's Σ IDF its own words
  hold × the best score (on LoCoMo dev the first hit was most often a neighbour of the turn that
  said it, or a turn on the same topic: Hit@1 0.475 → 0.51).
- `Near`: a lever on the stored vectors of the records around each candidate (a turn's
  previous and next of its session, `neighbours`), the late interaction of arXiv 2606.04194
  over a window instead of a whole session: each of the first ten candidates is lifted by `weight`
  × the best score × how much nearer the query its nearest neighbour is than the least near
  neighbour of those candidates — a turn amid a passage about the question over one that
  shares its words in passing. No embedding at query time: the index's own copy of the vectors.
- `Reply`: a lever on the relevance itself, after the score stage. A conversation answers in
  three turns: someone says a thing ("Here's a cake I made"), the other asks about it ("What
  frosting?"), the first answers ("Coconut cream"). The question names what was asked, the
  statement names the topic; the reply holds the answer in words of its own. Each of the first
  `REPLY_DEPTH` hits that was asked about passes to its speaker's reply ¼ × `weight` × its
  relevance, and the question between them `weight` × its own, combined as chances are
  (noisy-or: the reply is relevant by its own evidence or by theirs, never above 1). On LoCoMo
  dev the first hit was most often the statement two turns before the evidence (`replied`).
- numbers (`Policy.number_weight`, `measured`): a question that asks when, how long, how many,
  how much, how old, how often or how far is answered by a record that says a time or a
  number ("How long have Mel and her husband been married?" — "5 years already!"); each of the
  first `ASKED_DEPTH` hits whose own words say one (a time expression `clock.when` reads, a
  digit or a number word) gains `weight` × the best relevance, combined as chances (noisy-or).
  After the score stage, like the replies.
- `sessions`: a session is as near as its nearest turns (the session-level late interaction of
  arXiv 2606.04194): the best BM25 and the best cosine of each session's candidate turns make a
  list of sessions, fused like the turns, and each turn is lifted by its session's score.
- `diversify`: at most `cap` hits of one group (a session, a file) before every other group had
  its turn (multi-hop questions need evidence from several).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass

from tideline.clock import when
from tideline.search._hits import SCORE_PLACES, Hit, Policy

#: The owner's grouping of record ids (a turn's session): for `sessions` and `diversify`.
Groups = Callable[[Sequence[int]], Mapping[int, Hashable]]
#: The records a key's hits point at: key id → the owner's record ids.
Targets = Callable[[Sequence[int]], Mapping[int, Sequence[int]]]


@dataclass(frozen=True)
class Key:
    """A lever's way to the records (see the module docstring). `scope` is a `Scope` (typed
    loosely here: `_retrieve` owns that type); `policy` ranks the key's own index (None: the
    search's); `texts` looks its texts up for the verbatim check; `holds`: the words of the
    query the records it lifts hold by being found there (a date phrase)."""

    name: str
    scope: object
    weight: float
    policy: Policy | None = None
    targets: Targets | None = None
    texts: Callable[[Sequence[int]], Mapping[int, str]] | None = None
    holds: str = ""


@dataclass(frozen=True)
class Mark:
    """A lever's marks (see the module docstring): `marked(ids)` is the subset of the
    candidates' ids the question names."""

    name: str
    weight: float
    marked: Callable[[Sequence[int]], set[int]]


@dataclass(frozen=True)
class Answer:
    """A lever's answers (see the module docstring): `answers(ids)` maps the candidates that
    are questions to the record that answers each."""

    name: str
    weight: float
    answers: Callable[[Sequence[int]], Mapping[int, int]]
    demote: float = 0.0


@dataclass(frozen=True)
class Near:
    """A lever's neighbours (see the module docstring): `neighbours(ids)` maps candidates to
    the records around each."""

    name: str
    weight: float
    neighbours: Targets


@dataclass(frozen=True)
class Reply:
    """A lever's replies (see the module docstring): `replies(ids)` maps the candidates that
    were asked about to (the question, the reply by the candidate's own speaker)."""

    name: str
    weight: float
    replies: Callable[[Sequence[int]], Mapping[int, tuple[int, int]]]


#: What an owner hands `retrieve` as levers.
Lever = Key | Mark | Answer | Near | Reply

#: How many of the first hits (by relevance) pass theirs to their reply: the top of the list is
#: what this lever orders (on LoCoMo dev 5 beat 3 and 10 by 0.6–0.9 points of Hit@1).
REPLY_DEPTH = 5
#: The statement's share of the reply lever's weight (the question's is the whole weight).
STATEMENT_SHARE = 0.25
#: How many of the first hits the numbers lever reads (their own texts are looked up).
ASKED_DEPTH = 5
#: A question asking for a time or a quantity: English and Russian question words open it,
#: Chinese ones sit anywhere in it.
ASKS_NUMBER = re.compile(
    r"^\W*(when|what (year|month|day|date|time)|in (which|what) (year|month)"
    r"|how (many|much|long|old|often|far)|когда|сколько|как долго|в каком (году|месяце))\b"
    r"|什么时候|何时|多少|多久|几|哪一?年",
    re.IGNORECASE,
)
#: A number said in words or digits (English, Russian, Chinese).
_NUMBER = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty"
    r"|forty|fifty|hundred|thousand|dozen|couple|few|several|один|одна|два|две|три|четыре"
    r"|пять|шесть|семь|восемь|девять|десять|сто|тысяча)\b|[一二两三四五六七八九十百千万]",
    re.IGNORECASE,
)
#: Any day: `when` only needs one to find a time expression (its window is not used).
_ANY_DAY = dt.date(2000, 1, 1)


def says_number(text: str) -> bool:
    """Whether `text` says a time (a phrase `clock.when` reads) or a number."""
    return _NUMBER.search(text) is not None or when(text, _ANY_DAY) is not None


def measured(
    base: Sequence[Hit], says: Callable[[Sequence[int]], set[int]], weight: float, name: str
) -> list[Hit]:
    """`base` (scored, best first) with each of its first `ASKED_DEPTH` hits that `says` a
    time or a number given `weight` × the best relevance as a further chance (noisy-or; what
    it added in `lifts[name]`); re-ordered by relevance (then key). Only the first scope's."""
    head = [h for h in base[:ASKED_DEPTH] if h.source == 0]
    top = max((h.score for h in base), default=0.0)
    said = says([h.id for h in head]) if head and top > 0 else set()
    out: list[Hit] = []
    for h in base:
        if h.source == 0 and h.id in said:
            h = h.copy()
            _another_chance(h, 1.0 - weight * top, name)
        out.append(h)
    return sorted(out, key=lambda h: (-round(h.score, SCORE_PLACES), h.key))


def _another_chance(hit: Hit, missed: float, name: str) -> None:
    """`hit`'s relevance as the chance that it or another reason holds, the other missing
    with probability `missed` (noisy-or: never above 1); what it added in `lifts[name]`."""
    before = hit.score
    hit.score = 1.0 - (1.0 - max(before, 0.0)) * max(missed, 0.0)
    hit.lifts[name] = hit.lifts.get(name, 0.0) + hit.score - before


def answered(base: Sequence[Hit], answer: Answer) -> list[Hit]:
    """`base` with each question's answer lifted by `answer.weight` × the question's score and
    the question lowered by `answer.demote` × it (both in `lifts[name]`); re-ordered by score
    (then key). Only the first scope's ids are questions."""
    out = {h.key: h for h in base}
    copied: set[tuple[int, int]] = set()

    def changed(key: tuple[int, int]) -> Hit:  # a copy of each hit changed, once
        if key not in copied:
            copied.add(key)
            out[key] = out[key].copy() if key in out else Hit(key[1], fusion=fusion)
        return out[key]

    own = {h.id: h.score for h in base if h.source == 0 and h.score > 0}
    fusion = base[0].fusion if base else None
    for q, a in answer.answers(list(own)).items():
        given = own.get(q, 0.0)
        if answer.demote:
            question = changed((0, q))
            question.score -= answer.demote * given
            question.lifts[answer.name] = (
                question.lifts.get(answer.name, 0.0) - answer.demote * given
            )
        hit = changed((0, a))
        hit.score += answer.weight * given
        hit.lifts[answer.name] = hit.lifts.get(answer.name, 0.0) + answer.weight * given
    return sorted(out.values(), key=lambda h: (-round(h.score, SCORE_PLACES), h.key))


def replied(base: Sequence[Hit], reply: Reply, new: Callable[[int], Hit]) -> list[Hit]:
    """`base` (scored, best first) with the reply of each of its first `REPLY_DEPTH` hits
    that was asked about given the chance that the hit or its question is relevant through it
    (see the module docstring; what it added in `lifts[name]`), re-ordered by relevance (then
    key). A reply not among `base` joins it, made by `new(id)`. Only the first scope's ids."""
    out = {h.key: h for h in base}
    head = [h for h in base[:REPLY_DEPTH] if h.source == 0 and h.score > 0]
    found = reply.replies([h.id for h in head]) if head else {}
    copied: set[tuple[int, int]] = set()
    for h in head:
        if h.id not in found:
            continue
        question, answer = found[h.id]
        asked = out.get((0, question))
        chance = (1.0 - STATEMENT_SHARE * reply.weight * h.score) * (
            1.0 - reply.weight * (asked.score if asked is not None else 0.0)
        )
        key = (0, answer)
        if key not in copied:
            copied.add(key)
            out[key] = out[key].copy() if key in out else new(answer)
        _another_chance(out[key], chance, reply.name)
    return sorted(out.values(), key=lambda h: (-round(h.score, SCORE_PLACES), h.key))


def boost(base: Sequence[Hit], marked: set[int], weight: float, name: str) -> list[Hit]:
    """`base` with each marked hit's score raised by `weight` × itself (in `lifts[name]`);
    re-ordered by score (then key). Only the first scope's ids are marked."""
    out: list[Hit] = []
    for h in base:
        if h.source == 0 and h.id in marked and h.score > 0:  # a copy of each hit lifted
            h = h.copy()
            h.lifts[name] = h.lifts.get(name, 0.0) + weight * h.score
            h.score += weight * h.score
        out.append(h)
    return sorted(out, key=lambda h: (-round(h.score, SCORE_PLACES), h.key))


def credited(
    base: Sequence[Hit], share: Mapping[int, float], weight: float, name: str
) -> list[Hit]:
    """`base` with each first-scope hit's score raised by `weight` × its `share` (0–1) × the
    best score of `base` (in `lifts[name]`); re-ordered by score (then key)."""
    top = max((h.score for h in base), default=0.0)
    out: list[Hit] = []
    for h in base:
        value = weight * share.get(h.id, 0.0) * top if h.source == 0 else 0.0
        if value > 0:  # a copy of each hit lifted (the others are not changed)
            h = h.copy()
            h.lifts[name] = h.lifts.get(name, 0.0) + value
            h.score += value
        out.append(h)
    return sorted(out, key=lambda h: (-round(h.score, SCORE_PLACES), h.key))


def nearer(
    base: Sequence[Hit], cosines: Mapping[int, float], weight: float, name: str
) -> list[Hit]:
    """`base` with each first-scope hit in `cosines` (its nearest neighbour's cosine to the
    query) raised by `weight` × the best score × its cosine less the least of them (in
    `lifts[name]`); re-ordered by score (then key)."""
    if not cosines:
        return list(base)
    least = min(cosines.values())
    return credited(base, {i: c - least for i, c in cosines.items()}, weight, name)


def lift(base: Sequence[Hit], extra: Mapping[int, float], weight: float, name: str) -> list[Hit]:
    """`base` with each `extra[id]`, scaled to `weight` × base's best at extra's best, added to
    its score (new ids join with that alone; what was added is in `lifts[name]`); re-ordered by
    score (then id)."""
    top_extra = max(extra.values(), default=0.0)
    if top_extra <= 0 or weight == 0:
        return list(base)
    top = max((h.score for h in base), default=1.0) or 1.0
    scale = weight * top / top_extra
    out = {h.key: h.copy() for h in base}
    fusion = base[0].fusion if base else None
    for i, value in extra.items():
        hit = out.setdefault((0, i), Hit(i, fusion=fusion))
        hit.score += scale * value
        hit.lifts[name] = hit.lifts.get(name, 0.0) + scale * value
    return sorted(out.values(), key=lambda h: (-round(h.score, SCORE_PLACES), h.key))


def session_scores(hits: Sequence[Hit], group: Mapping[int, Hashable]) -> dict[int, Hit]:
    """Per group, a hit holding its best BM25 and its nearest distance among `hits`, keyed by
    a stand-in id (the group's first hit's id)."""
    best: dict[Hashable, Hit] = {}
    for h in hits:
        g = group.get(h.id, h.id)
        s = best.setdefault(g, Hit(h.id))
        if h.lex_score is not None and (s.lex_score is None or h.lex_score > s.lex_score):
            s.lex_score, s.lex_source = h.lex_score, h.lex_source
        if h.vec_distance is not None and (
            s.vec_distance is None or h.vec_distance < s.vec_distance
        ):
            s.vec_distance = h.vec_distance
    return {s.id: s for s in best.values()}


def diversify(hits: Sequence[Hit], group: Mapping[int, Hashable], cap: int) -> list[Hit]:
    """The hits with no group holding more than `cap` places ahead of a hit of a group that has
    fewer; order is otherwise kept. cap <= 0: unchanged."""
    if cap <= 0:
        return list(hits)
    seen: dict[Hashable, int] = {}
    first: list[Hit] = []
    later: list[Hit] = []
    for h in hits:
        g = group.get(h.id, h.id)
        seen[g] = seen.get(g, 0) + 1
        (first if seen[g] <= cap else later).append(h)
    return first + later
