"""`_meta.yaml`: what a collection is about. Parsed once, at the boundary, into typed values.

A folder becomes a collection by holding this file; without it the folder is invisible to the
router and `memo status` lists it as unregistered. Only `description` is required, because the
router cannot choose a collection it cannot describe.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tideline.errors import BadMeta, UnreadableFile
from tideline.library._files import read_inside
from tideline.library._paths import META_FILE

CHUNKER_VERSION = "headings-v1"
KNOWN_CHUNKERS = (CHUNKER_VERSION,)
DEFAULT_EMBEDDER = "intfloat/multilingual-e5-small"
MAX_META_BYTES = 64_000

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@dataclass(frozen=True)
class CollectionMeta:
    """The parsed `_meta.yaml` of one collection."""

    name: str
    description: str
    tags: tuple[str, ...] = field(default_factory=tuple)
    embedder: str = DEFAULT_EMBEDDER
    chunker: str = CHUNKER_VERSION

    @property
    def lexical_only(self) -> bool:
        """`embedder: none` turns vectors off for this collection."""
        return self.embedder.strip().lower() in ("none", "off", "")

    def to_yaml(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "tags": list(self.tags),
            "embedder": self.embedder,
            "chunker": self.chunker,
        }


def scalar_text(value: Any) -> str:
    """PyYAML turns `2026-01-02` into a date and `1.10` into a float; give back plain text."""
    if isinstance(value, _dt.datetime | _dt.date):
        return value.isoformat()
    if value is None:
        return ""
    return str(value)


def load_yaml(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)


def parse_meta(text: str, *, source: Path, default_name: str) -> CollectionMeta:
    """Parse the text of a `_meta.yaml`; every failure names the file and the fix."""
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise BadMeta(
            f"{source}: not valid YAML{where}; fix the syntax (quote descriptions with ':' in them)"
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BadMeta(f"{source}: must be a YAML mapping with name, description, tags, ...")
    description = scalar_text(data.get("description")).strip()
    if not description:
        raise BadMeta(
            f"{source}: 'description' is required (one line saying what the collection holds); "
            "the router cannot pick a collection it cannot describe"
        )
    name = scalar_text(data.get("name")).strip().strip("/") or default_name
    tags_raw = data.get("tags") or []
    if isinstance(tags_raw, str):
        tags_raw = [t for t in (p.strip() for p in tags_raw.split(",")) if t]
    if not isinstance(tags_raw, list):
        raise BadMeta(f"{source}: 'tags' must be a list like [corp, jira]")
    tags = tuple(scalar_text(t).strip() for t in tags_raw if scalar_text(t).strip())
    embedder = scalar_text(data.get("embedder")).strip() or DEFAULT_EMBEDDER
    chunker = scalar_text(data.get("chunker")).strip() or CHUNKER_VERSION
    if chunker not in KNOWN_CHUNKERS:
        raise BadMeta(
            f"{source}: unknown chunker {chunker!r}; use one of {', '.join(KNOWN_CHUNKERS)}"
        )
    return CollectionMeta(name, description, tags, embedder, chunker)


def read_meta(folder: Path, *, default_name: str, root: Path | None = None) -> CollectionMeta:
    """Read `<folder>/_meta.yaml` like a note: never through a link leading out of `root` (the
    library root; default `folder`), so an outside file's text never becomes a description."""
    source = folder / META_FILE
    try:
        raw, _ = read_inside(
            (root or folder).resolve(), folder.resolve() / META_FILE, limit=MAX_META_BYTES
        )
    except UnreadableFile as exc:
        raise BadMeta(f"{source}: {exc.reason}; make it a plain file in the folder") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadMeta(f"{source}: not UTF-8 text; save it as UTF-8") from None
    return parse_meta(text, source=source, default_name=default_name)


def write_text_atomic(path: Path, text: str) -> None:
    """Write through a temp file and a rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_meta(folder: Path, meta: CollectionMeta) -> Path:
    target = folder / META_FILE
    write_text_atomic(target, dump_yaml(meta.to_yaml()))
    return target
