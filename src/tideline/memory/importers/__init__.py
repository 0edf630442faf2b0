"""Importers of conversation files into the raw context (plug-ins behind one interface)."""

from __future__ import annotations

from pathlib import Path

from tideline.errors import InvalidInput
from tideline.memory.importers._base import (
    SNIFF_CHARS,
    ImportBatch,
    ImportedSession,
    Importer,
    Origin,
    open_text,
)
from tideline.plugins import load_plugins

#: `--format auto`: recognise the file by its first `SNIFF_CHARS` characters.
AUTO = "auto"


def importers() -> dict[str, Importer]:
    """Every registered importer by name."""
    found: dict[str, Importer] = {}
    load_plugins().hook.register_importers(register=found.__setitem__)
    return found


def get_importer(name: str) -> Importer:
    known = importers()
    if name not in known:
        raise InvalidInput(f"unknown import format {name!r}; use {AUTO} or one of {sorted(known)}")
    return known[name]


def detect(path: Path) -> str:
    """The name of the importer surest it can read `path` (each scores the file's head)."""
    with open_text(path) as fh:
        head = fh.read(SNIFF_CHARS)
    scores: dict[str, int] = {}
    for name, importer in importers().items():
        sniff = getattr(importer, "sniff", None)  # optional: a plugin's importer may not guess
        if callable(sniff):
            scores[name] = int(sniff(head))
    best = max(scores.values(), default=0)
    if best <= 0:
        raise InvalidInput(
            f"cannot tell what kind of export {path.name} is; pass --format with one of "
            f"{sorted(importers())}"
        )
    return min(name for name, score in scores.items() if score == best)


__all__ = [
    "AUTO",
    "ImportBatch",
    "ImportedSession",
    "Importer",
    "Origin",
    "detect",
    "get_importer",
    "importers",
]
