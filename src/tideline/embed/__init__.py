"""Embedders: the `Embedder` protocol, the bundled e5 backend, OpenAI-compatible HTTP, none, a cache."""

from tideline.embed._cache import CachedEmbedder, CacheStats, text_hash
from tideline.embed._e5 import E5Embedder
from tideline.embed._load import embedder_factories, load_embedder
from tideline.embed._none import NoneEmbedder
from tideline.embed._openai import OpenAIEmbedder
from tideline.embed._protocol import Embedder, estimate_tokens, normalise

__all__ = [
    "CacheStats",
    "CachedEmbedder",
    "E5Embedder",
    "Embedder",
    "NoneEmbedder",
    "OpenAIEmbedder",
    "embedder_factories",
    "estimate_tokens",
    "load_embedder",
    "normalise",
    "text_hash",
]
