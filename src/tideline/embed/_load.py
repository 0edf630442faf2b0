"""The registry of embedding backends: the built-ins and every plugin's, by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tideline.plugins import load_plugins


def embedder_factories() -> dict[str, Callable[[Any], Any]]:
    """Every registered backend name and its factory (which the composition root calls with the
    settings: `tideline.app.embedder_from`)."""
    found: dict[str, Callable[[Any], Any]] = {}
    load_plugins().hook.register_embedders(register=found.__setitem__)
    return found
