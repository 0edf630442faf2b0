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
from dataclasses import dataclass, field, replace

from tideline.search._analyse import Analyser, droppable, tokens
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


def has_word(text: str) -> bool:
    """Whether `text` holds a letter or a digit: something to look for."""
    return _WORD.search(text) is not None


@dataclass(frozen=True)
class ParsedQuery:
    """A user query cut into safe pieces.

    `match` targets the `unicode61` table; `trigram` the trigram table (each typed term of 3+
    characters as a substring, OR-ed); `trigram_all` the same terms AND-ed — a record matching it
    contains every typed term verbatim (the keyword boost); `verbatim` are those terms, casefolded;
    `words` are the plain words. `text`, `analyser` and `stop_words` say how `match` was made,
    so an index with another analyser can parse the text again its own way.
    """

    match: str | None
    trigram: str | None
    words: tuple[str, ...] = field(default_factory=tuple)
    trigram_all: str | None = None
    verbatim: tuple[str, ...] = field(default_factory=tuple)
    text: str = ""
    analyser: Analyser = "plain"
    stop_words: bool = False
    terms: tuple[str, ...] = field(default_factory=tuple)
    exclude: str | None = None

    def without(self, dropped: set[str]) -> ParsedQuery:
        """The query with these positive terms left out of `match` (at least one stays)."""
        kept = [t for t in self.terms if t not in dropped] or list(self.terms[:1])
        match = " OR ".join(kept)
        if self.exclude:
            match = f"({match}) NOT ({self.exclude})"
        return replace(self, match=match, terms=tuple(kept))

    def for_analyser(self, analyser: Analyser) -> ParsedQuery:
        """This query parsed for an index whose terms `analyser` made."""
        if analyser == self.analyser:
            return self
        return parse_query(self.text, analyser, stop_words=self.stop_words)

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


def _terms(body: str, phrase: bool, analyser: Analyser) -> list[tuple[str, str]]:
    """(surface, FTS5 string) pieces of one typed term for an index made by `analyser`: a
    phrase, or under `snowball` an unquoted run of Chinese, is cut into its analysed words (a
    query's words need not be adjacent in the document); other terms stay one phrase."""
    if analyser == "plain":
        return [(body.casefold(), spaced_cjk(body))]
    found = tokens(body, analyser)
    if not found:
        return []
    if not phrase and len(found) > 1 and all(s == t and not s.isascii() for s, t in found):
        return [(s, t) for s, t in found]  # a jieba cut (no stemming happens to CJK words)
    return [(" ".join(s for s, _ in found), " ".join(t for _, t in found))]


def parse_query(
    text: str, analyser: Analyser = "plain", *, stop_words: bool = False
) -> ParsedQuery:
    """Parse user text for an index whose terms `analyser` made; `stop_words` drops stop and
    question words (see `_analyse.droppable`). Never raises, whatever the input."""
    raw_text = (text or "")[:MAX_QUERY_CHARS]
    text = fold(valid_text(raw_text))[:MAX_QUERY_CHARS].replace("\x00", " ")
    text = text.translate(_SEPARATORS)
    positive: list[tuple[str, str]] = []
    negative: list[str] = []
    words: list[str] = []
    chunks: list[str] = []
    neg_chunks: list[str] = []
    for raw in _TOKEN.findall(text)[: MAX_TERMS * 2]:
        # `-word` excludes; `--option` and `-"…"` are literal text (command lines are searched too)
        negate = raw.startswith("-") and raw[1:2] not in ("-", '"', "") and has_word(raw)
        body = raw[1:] if negate else raw
        prefix = body.endswith("*") and not body.startswith('"')
        body = body.strip('"').rstrip("*")[:MAX_TERM_CHARS]
        if not has_word(body):
            continue
        star = "*" if prefix else ""
        pieces = _terms(body, raw.startswith('"'), analyser)
        if negate:
            negative += [_quote(t) + star for _, t in pieces]
        else:
            # an option (`--all`) or a quoted phrase is never a stop word to drop
            keep = raw.startswith(("-", '"'))
            positive += [("\x00" + s if keep else s, _quote(t) + star) for s, t in pieces]
        (neg_chunks if negate else chunks).append(body.casefold())
        if not negate:
            words.extend(_WORD.findall(body))
    if stop_words:  # stop and question words then never carry a match, substrings included
        drop = droppable([s for s, _ in positive])
        positive = [(s, t) for s, t in positive if s not in drop]
        chunks = [c for c in chunks if c not in drop]
    terms = list(dict.fromkeys(t for _, t in positive))[:MAX_TERMS]
    if not terms:
        return ParsedQuery(None, None, text=raw_text, analyser=analyser, stop_words=stop_words)
    match = " OR ".join(terms)
    exclude = " OR ".join(dict.fromkeys(negative)) or None
    if exclude:
        match = f"({match}) NOT ({exclude})"
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
        raw_text,
        analyser,
        stop_words,
        tuple(terms),
        exclude,
    )
