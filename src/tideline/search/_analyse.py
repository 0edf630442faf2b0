"""The lexical analyser: the one function that turns text into BM25 terms, at index time and at
query time alike (a term reaches the index only in the form a query will ask for it).

`plain` is FTS5's own `unicode61` view: case-folded words, every CJK character a token.
`snowball` (the default) stems words so "researched" finds "research" and "файлов" finds "файл":
Cyrillic words through the Russian Snowball stemmer, Latin words through the English one; Chinese
(Han) runs are cut into words by jieba's search mode (the words and the shorter words inside
them, so a query cut differently still meets the document); kana and hangul stay one token per
character. Digits and mixed tokens (`x86_64`, `v2`) are kept as written, lower-cased.

Stop and question words ("what", "did", "когда", "什么") are dropped from a query, never from the
index, and only when at least `MIN_CONTENT_TERMS` other terms remain: "go build" and "make
install" keep their command names, "What did Caroline research?" asks for "carolin research".
"""

from __future__ import annotations

import logging
import re
import threading
from functools import lru_cache
from typing import Any, Literal

import snowballstemmer

from tideline.search._stopwords import CHINESE, ENGLISH, RUSSIAN
from tideline.search._text import fold

Analyser = Literal["plain", "snowball"]
ANALYSERS: tuple[str, ...] = ("plain", "snowball")
DEFAULT_ANALYSER: Analyser = "snowball"

#: A query drops its stop words only when this many other terms remain.
MIN_CONTENT_TERMS = 2

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_OTHER = "\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(
    rf"(?P<han>[{_HAN}]+)|(?P<cjk>[{_CJK_OTHER}])|(?P<word>[^\W_{_HAN}{_CJK_OTHER}]+)"
)

#: Question words and particles a query may drop besides the stop-word lists (which are kept for
#: topic keywords and hold only words of two or more Han characters).
_QUERY_EXTRA = frozenset(
    [
        "的",
        "了",
        "是",
        "在",
        "吗",
        "呢",
        "吧",
        "啊",
        "和",
        "与",
        "或",
        "我",
        "你",
        "他",
        "她",
        "它",
        "有",
        "要",
        "会",
        "能",
        "用",
        "把",
        "被",
        "给",
        "如何",
        "为什么",
        "哪",
        "哪里",
        "哪个",
        "哪些",
        "怎样",
        "怎么样",
        "谁",
        "多少",
        "几",
        "ли",
        "чем",
        "какие",
        "каким",
        "какое",
        "каких",
        "чём",
        "s",
        "t",
        "d",
        "ll",
        "re",
        "ve",
        "m",
    ]
)
STOP_WORDS: frozenset[str] = ENGLISH | RUSSIAN | CHINESE
_QUERY_STOP = STOP_WORDS | _QUERY_EXTRA

_jieba_lock = threading.Lock()
_jieba: Any = None


def load_jieba() -> Any:
    """jieba, imported and initialised once and quietly (its dictionary takes ~2 s, and it logs
    on stderr): the one loader, for the analyser's cut and the keyword tagger (`analysis`)."""
    global _jieba
    if _jieba is None:
        with _jieba_lock:
            if _jieba is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba = jieba
    return _jieba


def _cut(span: str) -> list[str]:
    """jieba's search-mode cut."""
    return [w for w in load_jieba().cut_for_search(span) if w.strip()]


_STEMMERS = {
    "english": snowballstemmer.stemmer("english"),
    "russian": snowballstemmer.stemmer("russian"),
}
_stem_lock = threading.Lock()


@lru_cache(maxsize=1 << 17)
def _stem(word: str) -> str:
    """One word (already case-folded) → its Snowball stem by script; others unchanged."""
    if not word.isalpha():
        return word
    first = word[0]
    if "\u0400" <= first <= "\u04ff":
        lang = "russian"
    elif first.isascii() or "\u00c0" <= first <= "\u024f":
        lang = "english"
    else:
        return word
    with _stem_lock:  # the Snowball stemmer objects keep state between calls
        return str(_STEMMERS[lang].stemWord(word))


@lru_cache(maxsize=1 << 12)
def _han(span: str) -> tuple[str, ...]:
    return tuple(_cut(span))


def tokens(text: str, analyser: Analyser = DEFAULT_ANALYSER) -> list[tuple[str, str]]:
    """(surface, term) pairs of `text` in order; `surface` is case-folded, `term` its index form."""
    text = fold(text).casefold()
    out: list[tuple[str, str]] = []
    for m in _TOKEN.finditer(text):
        han, cjk, word = m.group("han"), m.group("cjk"), m.group("word")
        if han is not None:
            if analyser == "plain":
                out += [(c, c) for c in han]
            else:
                out += [(w, w) for w in _han(han)]
        elif cjk is not None:
            out.append((cjk, cjk))
        else:
            out.append((word, word if analyser == "plain" else _stem(word)))
    return out


def analyse(text: str, analyser: Analyser = DEFAULT_ANALYSER) -> str:
    """The text as the `N_fts` table stores it: its terms, space-separated."""
    return " ".join(t for _, t in tokens(text, analyser))


def droppable(surfaces: list[str]) -> set[str]:
    """The surfaces (case-folded words) a query may drop: its stop and question words, when at
    least `MIN_CONTENT_TERMS` other words remain."""
    stop = {s for s in surfaces if s in _QUERY_STOP}
    if len(set(surfaces) - stop) < MIN_CONTENT_TERMS:
        return set()
    return stop
