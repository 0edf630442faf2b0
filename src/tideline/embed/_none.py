"""The `none` backend: no vectors at all; everything searches lexically."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tideline.embed._protocol import estimate_tokens
from tideline.errors import EmbedderUnavailable


class NoneEmbedder:
    model_id = "none"
    dim = 0
    max_input_tokens = 512

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise EmbedderUnavailable(
            "embedding is off (TIDELINE_EMBEDDER=none); search is lexical only"
        )

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbedderUnavailable(
            "embedding is off (TIDELINE_EMBEDDER=none); search is lexical only"
        )

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)
