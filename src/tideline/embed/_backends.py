"""The backends by name: the built-in ones, registered like any plugin (`none` is here; e5 and the
HTTP backend have modules of their own), and the registry of every backend, built-in or a
plugin's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from tideline.embed._e5 import E5Embedder
from tideline.embed._embedder import Embedder, estimate_tokens
from tideline.errors import EmbedderUnavailable
from tideline.hookspecs import hookimpl
from tideline.plugins import load_plugins

if TYPE_CHECKING:
    from tideline.config import Settings


def embedder_factories() -> dict[str, Callable[[Settings], Embedder]]:
    """Every registered backend name and its factory (which the composition root calls with the
    settings: `tideline.app.embedder_from`)."""
    found: dict[str, Callable[[Settings], Embedder]] = {}
    load_plugins().hook.register_embedders(register=found.__setitem__)
    return found


@hookimpl
def register_embedders(register: Callable[[str, Callable[[Settings], Embedder]], None]) -> None:
    register("e5", lambda s: E5Embedder(batch=s.embed_batch))
    register("openai", _openai)
    register("none", lambda s: NoneEmbedder())


def _openai(s: Settings) -> Embedder:
    """The HTTP backend, imported when chosen: httpx costs a search with e5 ~0.3 s to import."""
    from tideline.embed._openai_embedder import OpenAIEmbedder

    return OpenAIEmbedder(
        s.embed_url,
        s.embed_model,
        s.embed_api_key,
        batch=s.embed_batch,
        timeout=s.embed_timeout,
        retries=s.embed_retries,
    )


class NoneEmbedder:
    """The `none` backend: no vectors at all; everything searches lexically."""

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
