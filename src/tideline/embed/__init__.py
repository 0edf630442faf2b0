"""Embedders: the `Embedder` protocol, the bundled e5 backend, OpenAI-compatible HTTP, none, a cache.

The HTTP client (httpx) loads on first use of `OpenAIEmbedder` (`tideline.lazy`): a search with the
bundled model never imports it.
"""

import typing as _typing

from tideline.embed._backends import NoneEmbedder, embedder_factories
from tideline.embed._cache import CachedEmbedder, CacheStats, text_hash
from tideline.embed._e5 import E5Embedder
from tideline.embed._embedder import Embedder, estimate_tokens, normalise
from tideline.embed._fit import (
    MAX_PARTS,
    QUERY_TOKENS,
    embed_parts,
    fit_prefix,
    fit_query,
    forget_embeddings,
    split_to_fit,
)
from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.embed._openai_embedder import OpenAIEmbedder

__all__ = [
    "MAX_PARTS",
    "QUERY_TOKENS",
    "CacheStats",
    "CachedEmbedder",
    "E5Embedder",
    "Embedder",
    "NoneEmbedder",
    "OpenAIEmbedder",
    "embed_parts",
    "embedder_factories",
    "estimate_tokens",
    "fit_prefix",
    "fit_query",
    "forget_embeddings",
    "normalise",
    "split_to_fit",
    "text_hash",
]

__getattr__, __dir__ = _lazy_exports(__name__)
