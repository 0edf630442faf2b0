"""The lexical side after the candidates: BM25 with term statistics of everything searched, the
lexical evidence of each candidate, and how far to trust the lexical list.

Why not FTS5's own BM25: its IDF is log((N − n + 0.5)/(n + 0.5)), clamped to 1e-6 when a word is
in half the records or more. In a collection of two notes a word found in one of them weighs
nothing, while "the" in one of three notes weighs 0.51, and scores of collections of different
sizes cannot be compared at all. So FTS5 only picks each index's candidates; `rescore` then
computes BM25 again (k1 = 1.2, b = 0.75, as FTS5) with the positive IDF log(1 + (N − n + 0.5) /
(n + 0.5)) from the record and token counts of every index searched together (a library's
collections), from each candidate's term frequencies (`TermCounts.term_freqs`, read by an FTS5
auxiliary function). That BM25 is the one ranked, merged across collections, fused and shown.

`lexical` evidence, 0–1: the candidate's BM25 over the query's `Σ idf` — what a record that holds
every query word once, at the average length, would score. It says how much of the query's
lexical weight the record holds, whatever the index size (`_score` reads it).

Evidence the floor respects (#37): a term is *rare* when at most `RARE_SHARE` of the records
searched hold it (and at least `RARE_MIN`, so a small library has rare words too); each candidate
records the query's rare terms the index matched in it (`Hit.rare`) and the share of the query's
Σ IDF its matched terms carry (`Hit.held`), both read from the index's own term frequencies
(FTS5's `tideline_tf` on SQLite, the tsvector on PostgreSQL). `evident` is the rule `retrieve`'s
floor keeps: a hit holding a rare term, or ranked first by both lists, whose matched terms carry
at least `EVIDENT_SHARE` of the query's weight (a word absent from every record weighs most, so
"grandmother's blood type" matched on "type" alone carries little).

Trust: when a query's words are in the records (a command line, a name) its best lexical hit
holds most of them and the lexical list is the sharpest signal; when they are not (a question
in Russian over English notes) the best hit shares one stray token and the list is noise that
would pull good vector hits down. The lexical list's weight in the fusion is therefore
`floor + (1 − floor) · coverage²`, coverage being the share of the query's terms its best hit
holds (the square: a query half covered is most often a translated one that kept a name; on the
tldr library the linear rule made the fusion lose to the vector list on translated summaries).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from tideline.search._hits import Hit
from tideline.search._query import ParsedQuery

K1 = 1.2
B = 0.75
#: A term in at most this share of the records searched is rare (see the module docstring)…
RARE_SHARE = 0.01
#: …or in at most this many, whatever the share (a word said once in a conversation is in five
#: turn records: the turn's and its two neighbours' on each side, `RawTurns.lexical_keys`).
RARE_MIN = 5
#: The share of the query's Σ IDF a hit's matched terms must carry to be evidence.
EVIDENT_SHARE = 0.5
#: A word no record holds says the query is about something else in proportion to how many
#: records lack it, up to this many (in a library of four notes most words of a paraphrase are
#: missing). Measured 1,000 / 100 / 50 / 20 / 10 / 1 with the notes' gate refitted each time
#: (docs/benchmarks-history.md, "the scripts an index writes in"): 50 is the largest that
#: answered none of the bundled notes' unanswerable questions held out and cut none.
ABSENT_RECORDS = 50


@dataclass(frozen=True)
class Counts:
    """What an index knows about a query's terms: its records, their tokens, and the records
    holding each term."""

    records: int
    tokens: int
    df: Mapping[str, int]
    #: The scripts of the query's words the index writes some word in, held by the query or
    #: not (`IndexBase.scripts_written`: "repot an orchid" over tldr's English pages is in
    #: English, though no page holds either word).
    scripts: frozenset[str] = frozenset()


#: One candidate's length in tokens and the frequency of each of the query's terms in it.
Freqs = tuple[int, Mapping[str, int]]


class TermCounts(Protocol):
    """What `rescore` needs from an index (`TextIndex` has it; None: the engine cannot say)."""

    def term_counts(self, terms: Sequence[str]) -> Counts | None: ...

    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None: ...


def fts_form(text: str) -> str:
    """`text` as FTS5's `unicode61 remove_diacritics 2` stores it (analysed text is case-folded
    already): diacritics of Latin letters removed, others (й, ё) kept."""
    if text.isascii():  # nothing to decompose (the common case: skips a loop per character)
        return text
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch) and out and out[-1] < "\u0250":
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def positive_terms(parsed: ParsedQuery) -> list[str]:
    """The query's positive terms as the index stored them: each FTS5 string unquoted (a
    phrase's words space-separated), prefix marks dropped."""
    return list(dict.fromkeys(k for k in map(term_key, parsed.terms) if k))


def term_key(term: str) -> str:
    """One FTS5 string of a query as `positive_terms` names it (empty: nothing to weigh)."""
    body = term.rstrip("*")
    if body.startswith('"') and body.endswith('"'):
        body = body[1:-1].replace('""', '"')
    return fts_form(" ".join(body.split())) if body.strip() else ""


def idf(n: int, records: int) -> float:
    """The positive BM25 IDF of a term in `n` of `records` records."""
    return math.log(1.0 + (records - n + 0.5) / (n + 0.5))


def pooled(counts: Sequence[Counts]) -> Counts:
    """The term statistics of several indexes searched together."""
    df: dict[str, int] = {}
    for c in counts:
        for term, n in c.df.items():
            df[term] = df.get(term, 0) + n
    scripts = frozenset().union(*(c.scripts for c in counts))
    return Counts(sum(c.records for c in counts), sum(c.tokens for c in counts), df, scripts)


def weights(terms: Sequence[str], stats: Counts) -> dict[str, float]:
    """Each term's IDF in `stats` (a phrase counts as its rarest word: an upper bound on the
    records holding it)."""
    return {term: idf(holding(term, stats), max(stats.records, 1)) for term in terms}


def holding(term: str, stats: Counts) -> int:
    """How many records hold `term` (a phrase: its rarest word's, an upper bound)."""
    return min((stats.df.get(w, 0) for w in term.split()), default=0)


def bm25(freqs: Freqs, idfs: Mapping[str, float], avgdl: float) -> float:
    """BM25 of one record from its term frequencies."""
    length, tf = freqs
    norm = K1 * (1.0 - B + B * length / avgdl) if avgdl > 0 else K1
    return sum(w * tf[t] * (K1 + 1.0) / (tf[t] + norm) for t, w in idfs.items() if tf.get(t))


@dataclass(frozen=True)
class Lexicon:
    """The query's terms weighted by the term statistics of every index searched together."""

    terms: list[str]
    idfs: dict[str, float]
    total: float
    avgdl: float
    rare: frozenset[str] = frozenset()
    #: The share of the query's terms written in a script the index holds (`scripts`).
    known: float = 1.0
    #: Whether a script of the query's terms is absent from the index (`scripts`).
    foreign: bool = False
    #: The share of the query's Σ IDF carried by terms no record holds, written in a script
    #: the index holds words in (`missing`), times the records over `ABSENT_RECORDS` (at most 1).
    absent: float = 0.0


def lexicon(indexes: Sequence[TermCounts], parsed: ParsedQuery) -> Lexicon | None:
    """The pooled term weights of `parsed` over `indexes`; None when there is nothing to weigh
    or an index cannot count its terms (then hits keep their index's own BM25)."""
    terms = positive_terms(parsed)
    if not terms or not indexes:
        return None
    counts = [ix.term_counts(terms) for ix in indexes]
    if any(c is None for c in counts):
        return None
    stats = pooled([c for c in counts if c is not None])
    idfs = weights(terms, stats)
    avgdl = stats.tokens / stats.records if stats.records else 0.0
    known, foreign = scripts(terms, stats)
    total = sum(idfs.values()) or 1.0
    gone = sum(idfs[t] for t in missing(terms, stats)) / total
    absent = gone * min(1.0, stats.records / ABSENT_RECORDS)
    return Lexicon(terms, idfs, total, avgdl, rare(terms, stats), known, foreign, absent)


def script(term: str) -> str:
    """The writing system of a term's first letter, as Unicode names it ("LATIN", "CYRILLIC",
    "CJK", "HIRAGANA", …); "" for a term without a letter (a number belongs to every script)."""
    for ch in term:
        if ch.isalpha():
            return unicodedata.name(ch, "").split(" ", 1)[0]
    return ""


def written(terms: Sequence[str], stats: Counts) -> set[str]:
    """The scripts of the query the index writes in: the census's (`Counts.scripts`) and those
    it holds some query term in."""
    return {script(t) for t in terms if holding(t, stats)} | stats.scripts


def scripts(terms: Sequence[str], stats: Counts) -> tuple[float, bool]:
    """(known, foreign): the share of the query's lettered terms written in a script the index
    writes in (`written`; 1.0 when none: nothing to judge by), and whether some script of the
    query is not one of those — a question in another language than the records (see the
    module docstring), not one whose words no record holds."""
    ok = written(terms, stats)
    counts: dict[str, int] = {}
    for term in terms:
        name = script(term)
        if name:
            counts[name] = counts.get(name, 0) + 1
    lettered = sum(counts.values())
    inside = sum(n for name, n in counts.items() if name in ok)
    known = inside / lettered if lettered and inside else 1.0
    return known, any(name not in ok for name in counts)


def missing(terms: Sequence[str], stats: Counts) -> list[str]:
    """The terms no record holds, of the scripts the index writes in (`written`): a word of a
    question in another language than the records is missing for want of a translation, not
    because the records are about something else."""
    ok = written(terms, stats)
    return [t for t in terms if script(t) in ok and not holding(t, stats)]


#: The code points the words of a script start with, as the index stores them (case-folded),
#: for the census of the scripts an index writes in (`IndexBase.scripts_written`); a script
#: not named here is judged by the query's held words alone.
SCRIPT_SPANS: dict[str, tuple[str, str]] = {
    "LATIN": ("a", "\u0250"),
    "GREEK": ("\u0370", "\u0400"),
    "CYRILLIC": ("\u0400", "\u0530"),
    "ARMENIAN": ("\u0530", "\u0590"),
    "HEBREW": ("\u0590", "\u0600"),
    "ARABIC": ("\u0600", "\u0700"),
    "DEVANAGARI": ("\u0900", "\u0980"),
    "THAI": ("\u0e00", "\u0e80"),
    "HIRAGANA": ("\u3040", "\u30a0"),
    "KATAKANA": ("\u30a0", "\u3100"),
    "CJK": ("\u3400", "\ua000"),
    "HANGUL": ("\uac00", "\ud7b0"),
}


def rare(terms: Sequence[str], stats: Counts) -> frozenset[str]:
    """The terms held by at most `RARE_SHARE` of the records (or `RARE_MIN`), and by one at
    least (a phrase: by its rarest word's records)."""
    most = max(RARE_MIN, RARE_SHARE * stats.records)
    out = set()
    for term in terms:
        if 0 < holding(term, stats) <= most:
            out.add(term)
    return frozenset(out)


def own_share(words: Lexicon, own: Set[str]) -> float:
    """The share of the query's Σ IDF whose terms a record's own words hold (`own`: its text as
    the index stores it, a set of terms; a phrase counts when every word of it is there)."""
    held = (t for t in words.terms if all(w in own for w in t.split()))
    return sum(words.idfs[t] for t in held) / words.total


def evident(hit: Hit) -> str | None:
    """Why the floor must keep `hit` whatever its relevance (see the module docstring), or
    None. The rare terms are the index's forms (stems), so they are counted, not shown."""
    if (hit.held or 0.0) < EVIDENT_SHARE:
        return None
    if hit.rare:
        n = len(hit.rare)
        return f"{n} rare word{'s' if n > 1 else ''} matched"
    if hit.lex_rank == 1 and hit.vec_rank == 1 and hit.lex_source != "trigram":
        return "first by words and by meaning"
    return None


class _Evidence(NamedTuple):
    """What one record's term frequencies say of the query (`rescore`): a tuple, made for
    each record of every candidate list."""

    bm25: float = 0.0
    lexical: float = 0.0
    held: float = 0.0
    terms: tuple[str, ...] = ()
    matched: frozenset[str] = frozenset()
    rare: tuple[str, ...] = ()


_NO_EVIDENCE = _Evidence()


def _evidence(freqs: Freqs, words: Lexicon) -> _Evidence:
    """The record's pooled BM25, its share of it (`Hit.lexical`), and the query's terms it
    holds (`Hit.held`, `Hit.matched`, `Hit.rare`)."""
    score = bm25(freqs, words.idfs, words.avgdl)
    tf = freqs[1]
    terms = tuple(t for t in words.terms if tf.get(t))
    return _Evidence(
        score,
        min(1.0, score / words.total),
        sum(words.idfs[t] for t in terms) / words.total,
        terms,
        frozenset(terms),
        tuple(t for t in terms if t in words.rare),
    )


def rescore(
    lex: Sequence[list[Hit]],
    vec: Sequence[list[Hit]],
    indexes: Sequence[TermCounts],
    parsed: ParsedQuery,
    words: Lexicon,
) -> float | None:
    """Give the BM25 hits of each lexical list (one list per index, in place) the BM25 of the
    pooled statistics as `lex_score` and re-order the list by it (trigram top-ups stay after the
    BM25 hits); give every candidate of either list its `lexical` evidence. Returns the share of
    the query's terms its best lexical hit holds (for `trust`), None without one."""
    best: tuple[float, float] = (-1.0, 1.0)  # (bm25, coverage) of the best hit
    for n, ix in enumerate(indexes):
        mine = (lex[n] if n < len(lex) else []) + (vec[n] if n < len(vec) else [])
        ids = sorted({h.id for h in mine})
        freqs = (ix.term_freqs(parsed, ids) if ids else None) or {}
        # each record once (a record is often in both lists)
        found = {i: _evidence(f, words) for i, f in freqs.items()}
        for h in mine:
            e = found.get(h.id, _NO_EVIDENCE)
            h.lexical, h.held, h.matched, h.rare = e.lexical, e.held, e.matched, e.rare
        if n >= len(lex):
            continue
        hits = lex[n]
        for h in hits:
            got = found.get(h.id)
            if got is None or h.lex_source == "trigram":
                continue
            h.lex_score = got.bm25
            best = max(best, (got.bm25, len(got.terms) / len(words.terms)))
        bm = sorted(
            (h for h in hits if h.lex_source != "trigram"), key=lambda h: -(h.lex_score or 0.0)
        )
        hits[:] = bm + [h for h in hits if h.lex_source == "trigram"]
        for rank, h in enumerate(hits, 1):
            h.lex_rank = rank
    return best[1] if best[0] >= 0 else None


def trust(coverage: float | None, floor: float) -> float:
    """The lexical list's weight for a query whose best lexical hit covers `coverage` of it."""
    if coverage is None:
        return 1.0
    return floor + (1.0 - floor) * coverage**2
