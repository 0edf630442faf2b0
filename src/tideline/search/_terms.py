"""Terms as FTS5's `unicode61 remove_diacritics` tokenizer sees them, for the engines that must
match what it matches: PostgreSQL's tsvector (`_pg_index`) and the lexical file (`_lexical_file`).
"""

from __future__ import annotations

import re
import unicodedata

from tideline.search._text import fold

#: A token: a run of letters and digits.
WORD = re.compile(r"[^\W_]+")
#: One FTS5 string of a parsed query: `"a b"` (a phrase of analysed terms), `*` for a prefix.
FTS_STRING = re.compile(r'"((?:[^"]|"")*)"(\*?)')


def plain(text: str) -> str:
    """Case and diacritics off (what `unicode61 remove_diacritics` and `trigram` do)."""
    if text.isascii():  # NFKC, NFKD and NFC leave ASCII as it is: skip the per-character walk
        return text.casefold()
    out = "".join(
        c for c in unicodedata.normalize("NFKD", fold(text)) if not unicodedata.combining(c)
    )
    return unicodedata.normalize("NFC", out).casefold()


def tokens(text: str) -> list[str]:
    """The tokens of an analysed text, folded."""
    return WORD.findall(plain(text))


def fts_strings(fts: str) -> list[tuple[list[str], bool]]:
    """Each FTS5 string of `fts` as (its tokens, whether it is a prefix); empty ones left out."""
    out = []
    for body, star in FTS_STRING.findall(fts):
        words = tokens(body.replace('""', '"'))
        if words:
            out.append((words, bool(star)))
    return out
