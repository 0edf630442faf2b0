"""The registry of embedding backends: the built-ins and every plugin's, by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tideline.plugins import load_plugins

if TYPE_CHECKING:
    from tideline.config import Settings
    from tideline.embed._protocol import Embedder


def embedder_factories() -> dict[str, Callable[[Settings], Embedder]]:
    """Every registered backend name and its factory (which the composition root calls with the
    settings: `tideline.app.embedder_from`)."""
    found: dict[str, Callable[[Settings], Embedder]] = {}
    load_plugins().hook.register_embedders(register=found.__setitem__)
    return found
