"""Keywords of a text in any mix of scripts, for topic clustering.

Chinese (Han) spans go through jieba POS tagging and keep nouns, verbs and adjectives: verbs such as
拒绝 or 逃避 carry more topic signal than generic nouns, and the document-frequency filter in
`topics` removes whatever is too common. Everything else is split on Unicode word boundaries,
stop words are dropped and words are stemmed with Snowball (Cyrillic → Russian, Greek → Greek,
Latin → `latin_language`, English by default), so "remembering" and "remembered" are one keyword.
Each keyword keeps its surface form for display.

jieba ships its dictionary, so this works offline; it is loaded lazily, once, and quietly. Results
are cached per Han span, per word and per text, because memories repeat themselves a lot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import snowballstemmer

from tideline.search import STOP_WORDS, load_jieba

__all__ = [
    "DEFAULT_CJK_POS_PREFIXES",
    "Keyword",
    "KeywordExtractor",
]

#: jieba POS flags kept: nouns (n, nr, ns, nz, vn...), verbs (v, vd...) and adjectives (a, ad, an).
DEFAULT_CJK_POS_PREFIXES = ("n", "v", "a")

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"(?P<han>[{_HAN}]+)|(?P<word>[^\W_{_HAN}]+(?:['’][^\W_{_HAN}]+)*)")
_LETTER_RE = re.compile(r"[^\W\d_]")


def _jieba_posseg() -> Any:
    """jieba's POS tagger, on jieba loaded once and quietly (`search.load_jieba`)."""
    load_jieba()
    import jieba.posseg

    return jieba.posseg


@dataclass(frozen=True, slots=True)
class Keyword:
    """A keyword: `key` is what documents are compared by (a stem, or the Chinese word itself);
    `surface` is the form as written, for display."""

    key: str
    surface: str


def _script_language(word: str, latin_language: str) -> str | None:
    """The Snowball language for a word's script, or None to leave it unstemmed."""
    first = word[0]
    if "\u0400" <= first <= "\u04ff":
        return "russian"
    if "\u0370" <= first <= "\u03ff":
        return "greek"
    if first.isascii() or "\u00c0" <= first <= "\u024f":
        return latin_language
    return None


class KeywordExtractor:
    """Extracts keywords with its own caches; one instance serves a whole corpus."""

    def __init__(
        self,
        *,
        latin_language: str = "english",
        min_cjk_length: int = 2,
        min_word_length: int = 2,
        cjk_pos_prefixes: Iterable[str] = DEFAULT_CJK_POS_PREFIXES,
        stopwords: Iterable[str] | None = None,
        cache_size: int = 1 << 16,
    ) -> None:
        if latin_language not in snowballstemmer.algorithms():
            raise ValueError(
                f"latin_language={latin_language!r}: no Snowball stemmer of that name; "
                f"use one of {', '.join(snowballstemmer.algorithms())}"
            )
        self.latin_language = latin_language
        self.min_cjk_length = min_cjk_length
        self.min_word_length = min_word_length
        self.cjk_pos_prefixes = tuple(cjk_pos_prefixes)
        self.stopwords = frozenset(stopwords) if stopwords is not None else STOP_WORDS
        self._stemmers: dict[str, Any] = {}
        self._han = lru_cache(maxsize=cache_size)(self._han_keywords)
        self._word = lru_cache(maxsize=cache_size * 4)(self._word_keyword)
        self._text = lru_cache(maxsize=cache_size)(self._text_keywords)

    def extract(self, text: str) -> tuple[Keyword, ...]:
        """All keyword occurrences of `text`, in order (repeats included)."""
        return self._text(text)

    def _text_keywords(self, text: str) -> tuple[Keyword, ...]:
        out: list[Keyword] = []
        for match in _TOKEN_RE.finditer(text):
            han = match.group("han")
            if han is not None:
                out.extend(self._han(han))
            else:
                kw = self._word(match.group("word"))
                if kw is not None:
                    out.append(kw)
        return tuple(out)

    def _han_keywords(self, span: str) -> tuple[Keyword, ...]:
        if len(span) < self.min_cjk_length:
            return ()
        out = []
        for pair in _jieba_posseg().cut(span):
            word, flag = pair.word, pair.flag
            if (
                len(word) >= self.min_cjk_length
                and flag.startswith(self.cjk_pos_prefixes)
                and word not in self.stopwords
            ):
                out.append(Keyword(word, word))
        return tuple(out)

    def _word_keyword(self, token: str) -> Keyword | None:
        lower = token.casefold().replace("’", "'").replace("ё", "е")
        if len(lower) < self.min_word_length or lower in self.stopwords:
            return None
        if not _LETTER_RE.search(lower):
            return None
        lang = _script_language(lower, self.latin_language)
        if lang is None:
            return Keyword(lower, token)
        stemmer = self._stemmers.get(lang)
        if stemmer is None:
            stemmer = self._stemmers[lang] = snowballstemmer.stemmer(lang)
        if lower.endswith("'s"):
            lower, token = lower[:-2], token[:-2]
        stem = stemmer.stemWord(lower)
        if len(stem) < self.min_word_length:
            return None
        return Keyword(stem, token)
