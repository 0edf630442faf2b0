"""Choosing a backend by name, through the plugin registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tideline.config import Settings
from tideline.embed._cache import CachedEmbedder
from tideline.embed._protocol import Embedder
from tideline.errors import UnknownEmbedder
from tideline.plugins import load_plugins


def embedder_factories() -> dict[str, Callable[[Any], Any]]:
    """Every registered backend name and its factory."""
    found: dict[str, Callable[[Any], Any]] = {}
    load_plugins().hook.register_embedders(register=found.__setitem__)
    return found


def load_embedder(settings: Settings, *, cache: bool = True) -> Embedder:
    """The embedder named by `settings.embedder`, wrapped in the persistent cache."""
    factories = embedder_factories()
    name = settings.embedder
    if name not in factories:
        raise UnknownEmbedder(
            f"unknown embedder {name!r}; set TIDELINE_EMBEDDER to one of {sorted(factories)}"
        )
    inner: Embedder = factories[name](settings)
    if not cache or inner.model_id == "none":
        return inner
    return CachedEmbedder(inner, settings.cache_path)
