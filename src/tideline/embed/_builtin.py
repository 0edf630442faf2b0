"""The built-in backends, registered like any plugin."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tideline.embed._e5 import E5Embedder
from tideline.embed._none import NoneEmbedder
from tideline.embed._protocol import Embedder
from tideline.hookspecs import hookimpl

if TYPE_CHECKING:
    from tideline.config import Settings


@hookimpl
def register_embedders(register: Callable[[str, Callable[[Settings], Embedder]], None]) -> None:
    register("e5", lambda s: E5Embedder(batch=s.embed_batch))
    register("openai", _openai)
    register("none", lambda s: NoneEmbedder())


def _openai(s: Settings) -> Embedder:
    """The HTTP backend, imported when chosen: httpx costs a search with e5 ~0.3 s to import."""
    from tideline.embed._openai import OpenAIEmbedder

    return OpenAIEmbedder(
        s.embed_url,
        s.embed_model,
        s.embed_api_key,
        batch=s.embed_batch,
        timeout=s.embed_timeout,
        retries=s.embed_retries,
    )
