"""Importers of conversation files into the raw context (plug-ins behind one interface)."""

from __future__ import annotations

from typing import Any

from tideline.errors import InvalidInput
from tideline.memory.importers._base import ImportBatch, ImportedSession, Importer
from tideline.plugins import load_plugins


def importers() -> dict[str, Any]:
    """Every registered importer by name."""
    found: dict[str, Any] = {}
    load_plugins().hook.register_importers(register=found.__setitem__)
    return found


def get_importer(name: str) -> Importer:
    known = importers()
    if name not in known:
        raise InvalidInput(f"unknown import format {name!r}; use one of {sorted(known)}")
    return known[name]  # type: ignore[no-any-return]


__all__ = ["ImportBatch", "ImportedSession", "Importer", "get_importer", "importers"]
