"""A query's term frequencies counted in the candidates' own lexical keys, with FTS5's own
`unicode61` tokenizer (through apsw), instead of FTS5 walking every match of the query.

`TextIndex.term_freqs` gives the BM25 re-scoring (`_lexical.rescore`) each candidate's length
in tokens and its count of each of the query's phrases. FTS5 answers that by running the query
and checking each match against the candidates, so its cost follows the matches of the query's
words (~0.5 µs a match): at a million turns a question's frequent words match hundreds of
thousands of records, and that walk was the largest part of a turn search (docs/benchmarks.md,
"A million turns"). Counting in the candidates' keys costs per candidate instead, whatever the
index's size. The answer is FTS5's: the key is the string FTS5 indexed (the owner's key as the
analyser cut it), tokenized by the same tokenizer with the same options, and a record is counted
only where FTS5's query matches it (one of its phrases, none of the excluded ones). A query this
count cannot answer exactly (a prefix term, another shape of expression) is left to FTS5.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import apsw

from tideline.search._lexical import Freqs
from tideline.search._query import ParsedQuery

#: The `tokenize=` options of every `N_fts` table (`TextIndex.create_tables`).
TOKENIZER = ("unicode61", ["remove_diacritics", "2"])

_QUOTED = re.compile(r'"((?:[^"]|"")*)"')

Phrase = tuple[str, ...]


class KeyCounter:
    """FTS5's tokenizer of one connection, and the counting (see the module docstring)."""

    def __init__(self, conn: Any):
        self._tokenize = conn.fts5_tokenizer(*TOKENIZER)

    def tokens(self, text: str, query: bool = False) -> list[str]:
        reason = apsw.FTS5_TOKENIZE_QUERY if query else apsw.FTS5_TOKENIZE_DOCUMENT
        found: list[str] = self._tokenize(
            text.encode("utf-8"), reason, None, include_offsets=False, include_colocated=False
        )
        return found

    def phrases(self, match: ParsedQuery) -> tuple[list[Phrase], list[Phrase]] | None:
        """(positive, excluded) phrases as FTS5 tokenizes them, in the expression's order; None
        for an expression other than `"a" OR "b" …` (with `NOT (…)`), or with a prefix term."""
        shape = " OR ".join(match.terms)
        if match.exclude:
            shape = f"({shape}) NOT ({match.exclude})"
        if match.match != shape or "*" in shape:
            return None
        positive = [self._phrase(t) for t in match.terms]
        if any(p is None for p in positive):
            return None
        excluded = [self._phrase(m.group(0)) for m in _QUOTED.finditer(match.exclude or "")]
        return [p for p in positive if p is not None], [p for p in excluded if p is not None]

    def _phrase(self, term: str) -> Phrase | None:
        """One quoted FTS5 string's tokens (None: not one quoted string)."""
        got = _QUOTED.fullmatch(term)
        if got is None:
            return None
        return tuple(self.tokens(got.group(1).replace('""', '"'), query=True))

    def freqs(
        self, keys: Mapping[int, str], positive: Sequence[Phrase], excluded: Sequence[Phrase]
    ) -> dict[int, Freqs]:
        """Each matching record's length in tokens and its count of each phrase, keyed as
        FTS5's `tideline_tf` keys them (the phrase's tokens, space-separated)."""
        cut = {r: self.tokens(key) for r, key in keys.items()}
        return counted({r: (len(t), spaced(t)) for r, t in cut.items()}, positive, excluded)


def spaced(tokens: Sequence[str]) -> str:
    """Tokens as `counted` reads them: each between single spaces, two between neighbours, so
    `str.count` of " word " finds every occurrence, side by side ones too (a token never holds
    a space: unicode61 splits on it)."""
    return f" {'  '.join(tokens)} " if tokens else ""


def counted(
    records: Mapping[int, tuple[int, str]],
    positive: Sequence[Phrase],
    excluded: Sequence[Phrase],
) -> dict[int, Freqs]:
    """Each matching record's length and phrase counts, from its (length in tokens, `spaced`
    tokens): what FTS5 answers (a record matches with one of the positive phrases and none of
    the excluded ones). A one-word phrase is counted by `str.count`; a longer one by its
    positions (occurrences that overlap count, as in FTS5)."""
    every = [*positive, *excluded]
    names = [" ".join(p) for p in every]
    needles = [f" {p[0]} " if len(p) == 1 else "" for p in every]
    out: dict[int, Freqs] = {}
    for record, (length, text) in records.items():
        counts = [
            text.count(needle) if needle else _occurrences(text.split(), phrase)
            for needle, phrase in zip(needles, every, strict=True)
        ]
        if not any(counts[: len(positive)]) or any(counts[len(positive) :]):
            continue
        tf: dict[str, int] = {}
        for name, n in zip(names, counts, strict=True):
            tf[name] = tf.get(name, 0) + n
        out[record] = (length, tf)
    return out


def _occurrences(toks: Sequence[str], phrase: Phrase) -> int:
    """Positions where `phrase` starts in `toks` (overlapping ones too, as FTS5 counts)."""
    if not phrase:
        return 0
    n, first = len(phrase), phrase[0]
    return sum(
        1
        for j, t in enumerate(toks[: len(toks) - n + 1])
        if t == first and tuple(toks[j : j + n]) == phrase
    )
