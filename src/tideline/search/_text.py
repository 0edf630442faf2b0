"""Text normalisation shared by indexing and querying.

FTS5's `unicode61` tokenizer treats a run of CJK characters with no spaces as one token, so a
Chinese word inside a sentence could never match. Before text reaches the `unicode61` table we put a
space around every CJK character: each becomes a token, and a multi-character query becomes a phrase
of adjacent characters, which BM25 ranks like any other phrase. Both sides must use `spaced_cjk`.

`valid_text` is the gate for text from outside: a lone surrogate (an undecodable byte in a command
line argument, a `\\udXXX` escape in JSON) cannot be encoded as UTF-8, so SQLite, hashes and the
embedder would all fail on it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache


@cache
def _cjk() -> re.Pattern[str]:
    """CJK Unified Ideographs (+ext A), compatibility ideographs, kana, hangul syllables, CJK
    punctuation. Compiled on first use, as `_surrogate` is (wide ranges take milliseconds to
    compile: a CLI search in English needs neither)."""
    return re.compile(
        "([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u3000-\u303f\uff00-\uffef])"
    )


def spaced_cjk(text: str) -> str:
    """Put spaces around CJK characters so `unicode61` indexes each one as a token."""
    return text if text.isascii() else _cjk().sub(r" \1 ", text)


@cache
def _surrogate() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, as a UTF-8 decoder replaces a bad byte."""
    if text.isascii():
        return text
    return _surrogate().sub("\ufffd", text)


def fold(text: str) -> str:
    """NFKC: the same normal form for documents and queries (ligatures, full-width forms, …)."""
    return unicodedata.normalize("NFKC", text)
