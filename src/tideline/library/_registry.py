"""`_registry.yaml`: the listing of collections at the library root, for the router.

The `_meta.yaml` files are the truth; the registry is rebuilt from them by `memo index` and updated
by `memo init-collection`. It exists so that routing over thousands of collections reads one file
instead of walking the tree. Entries carry the description, tags and the last indexing counts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tideline.errors import BadMeta, UnreadableFile
from tideline.library._files import read_inside
from tideline.library._layout import Layout
from tideline.library._meta import dump_yaml, load_yaml, scalar_text, write_text_atomic
from tideline.library._paths import REGISTRY_FILE

MAX_REGISTRY_BYTES = 50_000_000
_HEADER = "# Written by memo from the collections' _meta.yaml files; edit those, not this.\n"


@dataclass(frozen=True)
class RegistryEntry:
    """One collection as the router sees it."""

    name: str
    path: str
    description: str
    tags: tuple[str, ...] = field(default_factory=tuple)
    files: int | None = None
    chunks: int | None = None
    indexed_at: str = ""

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "description": self.description}
        if self.tags:
            out["tags"] = list(self.tags)
        if self.files is not None:
            out["files"] = self.files
        if self.chunks is not None:
            out["chunks"] = self.chunks
        if self.indexed_at:
            out["indexed_at"] = self.indexed_at
        return out


def load_registry(root: Path) -> dict[str, RegistryEntry]:
    """Read `_registry.yaml`; a missing file, or one that is not a plain file inside the root
    (a link leading out), is an empty registry: it is rebuilt from the `_meta.yaml` files."""
    source = root / REGISTRY_FILE
    if not os.path.lexists(source):
        return {}
    try:
        raw, _ = read_inside(root.resolve(), source, limit=MAX_REGISTRY_BYTES)
    except UnreadableFile:
        return {}
    try:
        data = load_yaml(raw.decode("utf-8"))
    except (UnicodeDecodeError, Exception) as exc:  # yaml.YAMLError or bad bytes
        raise BadMeta(
            f"{source}: cannot be parsed ({type(exc).__name__}); delete it and run `memo index`"
        ) from None
    items = (data or {}).get("collections") if isinstance(data, dict) else None
    if not isinstance(items, dict):
        return {}
    out: dict[str, RegistryEntry] = {}
    for name, value in items.items():
        if not isinstance(value, dict):
            continue
        tags = value.get("tags") or []
        out[str(name)] = RegistryEntry(
            name=str(name),
            path=scalar_text(value.get("path") or name),
            description=scalar_text(value.get("description")),
            tags=tuple(scalar_text(t) for t in tags) if isinstance(tags, list) else (),
            files=value.get("files"),
            chunks=value.get("chunks"),
            indexed_at=scalar_text(value.get("indexed_at")),
        )
    return out


def save_registry(root: Path, entries: dict[str, RegistryEntry]) -> Path:
    target = root / REGISTRY_FILE
    body = {"collections": {n: entries[n].to_yaml() for n in sorted(entries)}}
    text = _HEADER + dump_yaml(body)
    try:
        if target.read_text(encoding="utf-8") == text:
            return target  # a no-op index writes nothing
    except OSError:
        pass
    write_text_atomic(target, text)
    return target


def registry_from_layout(
    layout: Layout, previous: dict[str, RegistryEntry] | None = None
) -> dict[str, RegistryEntry]:
    """Entries for every collection on disk, keeping the counts of the previous registry."""
    previous = previous or {}
    out: dict[str, RegistryEntry] = {}
    for c in layout.collections:
        old = previous.get(c.name)
        entry = RegistryEntry(c.name, c.rel, c.meta.description, c.meta.tags)
        if old is not None and old.path == c.rel:
            entry = replace(entry, files=old.files, chunks=old.chunks, indexed_at=old.indexed_at)
        out[c.name] = entry
    return out
