"""Importers of conversation files into the raw context (plug-ins behind one interface)."""

from __future__ import annotations

import json
from pathlib import Path

from tideline.errors import InvalidInput
from tideline.memory.importers._importer import (
    SNIFF_CHARS,
    ImportBatch,
    ImportedSession,
    Importer,
    Origin,
    first_json_line,
    open_text,
    read_text,
)
from tideline.plugins import load_plugins

#: `--format auto`: recognise the file by its first `SNIFF_CHARS` characters.
AUTO = "auto"


def importers() -> dict[str, Importer]:
    """Every registered importer by name."""
    found: dict[str, Importer] = {}
    load_plugins().hook.register_importers(register=found.__setitem__)
    return found


def format_names(*, auto: bool = False) -> str:
    """The formats `--format` takes, as a person reads them: "chatgpt, claude, … or transcript"
    (`auto` first when it is worth naming)."""
    *rest, last = [AUTO] * auto + sorted(importers())
    return f"{', '.join(rest)} or {last}"


def get_importer(name: str) -> Importer:
    known = importers()
    if name not in known:
        raise InvalidInput(f"unknown import format {name!r}; use {format_names(auto=True)}")
    return known[name]


def _json_fault(path: Path, head: str) -> str | None:
    """Where a file that looks like one JSON document stops being JSON ("line 153: not valid
    JSON (…)"), the likelier reason nothing recognised it (a truncated export); None when it is
    not JSON-looking, parses, or is JSON Lines (its first line parses on its own)."""
    if not head.lstrip().startswith(("[", "{")) or first_json_line(head) is not None:
        return None
    try:
        json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}: not valid JSON ({exc.msg})"
    except (ValueError, RecursionError):
        return None  # valid JSON Python cannot hold: the importer itself reports it
    return None


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
        fault = _json_fault(path, head)
        if fault is not None:
            raise InvalidInput(
                f"{path.name} {fault}, so its kind cannot be told; export it again whole (a "
                f"cut-short download ends like this) or pass --format ({format_names()}) to "
                "import what is readable"
            )
        raise InvalidInput(
            f"cannot tell what kind of export {path.name} is; pass --format with one of "
            f"{format_names()}"
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
