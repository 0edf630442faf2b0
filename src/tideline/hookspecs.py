"""Plugin hooks. A plugin is a module or object with `@hookimpl` functions, found through the
`tideline` entry-point group. See docs/plugins.md for an example of every hook."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from tideline.config import Settings

hookspec = pluggy.HookspecMarker("tideline")
hookimpl = pluggy.HookimplMarker("tideline")


@hookspec
def register_embedders(register: Callable[[str, Callable[[Settings], object]], None]) -> None:
    """Register embedding backends: `register(name, factory)`; `factory(settings)` returns an
    object satisfying `tideline.embed.Embedder`."""


@hookspec
def register_importers(register: Callable[[str, object], None]) -> None:
    """Register conversation importers: `register(name, importer)`; the importer has `name`,
    `description` and `read(path) -> tideline.memory.importers.ImportBatch`."""
