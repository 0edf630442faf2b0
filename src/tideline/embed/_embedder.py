"""The `Embedder` seam: everything that turns text into vectors looks like this."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Documents and queries are embedded differently (e5 uses `passage:` / `query:` prefixes).

    Vectors are float32 and L2-normalised, so cosine similarity is a dot product. `dim == 0` means
    "no vectors" (the `none` backend): callers search lexically.

    `max_input_tokens` is the model's own input limit, in `count_tokens` units. Backends truncate
    longer inputs to it, and a query to at most `QUERY_TOKENS` (it keeps its head: `fit_query`);
    callers that must not lose text split documents first (`embed_parts`).
    """

    model_id: str
    max_input_tokens: int

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim)."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Shape (dim,)."""
        ...

    def count_tokens(self, text: str) -> int: ...


def estimate_tokens(text: str) -> int:
    """Token estimate for backends without a tokenizer: ~4 characters a token, at least 1 per word.

    Good to ±30% for English prose; CJK text counts one token per character.
    """
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af")
    rest = len(text) - cjk
    return max(len(text.split()), (rest + 3) // 4) + cjk


def normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)
