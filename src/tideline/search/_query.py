"""Turn any user string into a safe FTS5 query.

Users (and models) type quotes, `*`, `NEAR`, `-`, `:`, words that look like column names,
unbalanced parentheses, emoji and mixed scripts. FTS5 would raise a syntax error on many of them, so
we never pass user text through: we cut it into terms and emit each one as a double-quoted string
(FTS5 then tokenizes inside the quotes, so `"a:b"` is the phrase `a b`, never a column filter).

Supported on purpose:
- `"an exact phrase"` stays a phrase;
- `word*` is a prefix query;
- `-word` excludes documents containing it (only when there is at least one positive term);
  `--option` is not an exclusion but the literal word, so command lines can be searched.
Everything else is a plain term. Positive terms are OR-ed: BM25 ranks documents that match more and
rarer terms first, which suits natural-language questions better than AND.

Bounded on purpose, so one pasted megabyte cannot stall the index (a 1 MB query without spaces
once took 49 s: a single million-character phrase for the trigram table): only the first
`MAX_QUERY_CHARS` characters are read, at most `MAX_TERMS` terms are kept, and a term is cut to
`MAX_TERM_CHARS` characters. `bound_query` applies the first rule at a search entry point and says
so in one line, for the results' warnings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tideline.search._text import fold, spaced_cjk, valid_text

_TOKEN = re.compile(r'"[^"]*"?|\S+')
_WORD = re.compile(r"[^\W_]+")
MAX_TERMS = 64
MAX_QUERY_CHARS = 2_000
MAX_TERM_CHARS = 100
# Parentheses, braces and commas separate terms; they are never passed on as FTS5 syntax.
_SEPARATORS = str.maketrans({c: " " for c in "(){}[],;"})


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _has_word(text: str) -> bool:
    return _WORD.search(text) is not None


@dataclass(frozen=True)
class ParsedQuery:
    """A user query cut into safe pieces.

    `match` targets the `unicode61` table; `trigram` the trigram table (each typed term of 3+
    characters as a substring, OR-ed); `trigram_all` the same terms AND-ed — a record matching it
    contains every typed term verbatim (the keyword boost); `verbatim` are those terms, casefolded;
    `words` are the plain words. `terms` (text, is a prefix) and `excluded` are the same positive
    and negative terms unquoted, for an engine with another query syntax (PostgreSQL's tsquery).
    """

    match: str | None
    trigram: str | None
    words: tuple[str, ...] = field(default_factory=tuple)
    trigram_all: str | None = None
    verbatim: tuple[str, ...] = field(default_factory=tuple)
    terms: tuple[tuple[str, bool], ...] = field(default_factory=tuple)
    excluded: tuple[str, ...] = field(default_factory=tuple)

    @property
    def empty(self) -> bool:
        return self.match is None and self.trigram is None


def bound_query(text: str) -> tuple[str, str | None]:
    """The part of `text` search reads, and a notice when that is not all of it."""
    if len(text) <= MAX_QUERY_CHARS:
        return text, None
    return text[:MAX_QUERY_CHARS], (
        f"query cut to its first {MAX_QUERY_CHARS:,} of {len(text):,} characters "
        "(the search limit); search for a shorter passage"
    )


def parse_query(text: str) -> ParsedQuery:
    """Parse user text; never raises, whatever the input."""
    text = fold(valid_text(text or "")[:MAX_QUERY_CHARS])[:MAX_QUERY_CHARS].replace("\x00", " ")
    text = text.translate(_SEPARATORS)
    positive: list[str] = []
    negative: list[str] = []
    terms: dict[tuple[str, bool], None] = {}
    excluded: dict[str, None] = {}
    words: list[str] = []
    chunks: list[str] = []
    neg_chunks: list[str] = []
    for raw in _TOKEN.findall(text)[: MAX_TERMS * 2]:
        # `-word` excludes; `--option` and `-"…"` are literal text (command lines are searched too)
        negate = raw.startswith("-") and raw[1:2] not in ("-", '"', "") and _has_word(raw)
        body = raw[1:] if negate else raw
        prefix = body.endswith("*") and not body.startswith('"')
        body = body.strip('"').rstrip("*")[:MAX_TERM_CHARS]
        if not _has_word(body):
            continue
        term = _quote(spaced_cjk(body)) + ("*" if prefix else "")
        (negative if negate else positive).append(term)
        if negate:
            excluded[body] = None
        else:
            terms[body, prefix] = None
        (neg_chunks if negate else chunks).append(body.casefold())
        if not negate:
            words.extend(_WORD.findall(body))
    positive = list(dict.fromkeys(positive))[:MAX_TERMS]
    if not positive:
        return ParsedQuery(None, None)
    match = " OR ".join(positive)
    if negative:
        match = f"({match}) NOT ({' OR '.join(dict.fromkeys(negative))})"
    tri_terms = list(dict.fromkeys(c for c in chunks if len(c) >= 3))[:MAX_TERMS]
    trigram = " OR ".join(_quote(w) for w in tri_terms) or None
    tri_neg = list(dict.fromkeys(c for c in neg_chunks if len(c) >= 3))
    if trigram and tri_neg:
        trigram = f"({trigram}) NOT ({' OR '.join(_quote(w) for w in tri_neg)})"
    trigram_all = " AND ".join(_quote(w) for w in tri_terms) or None
    return ParsedQuery(
        match,
        trigram,
        tuple(dict.fromkeys(words)),
        trigram_all,
        tuple(tri_terms),
        tuple(terms)[:MAX_TERMS],
        tuple(excluded),
    )
