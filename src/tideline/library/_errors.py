"""Errors of the library, all subclasses of the shared tree in `tideline.errors`.

InvalidInput
├── PathOutsideLibrary     a path escapes the library root (`../`, absolute, symlink out)
├── UnreadableFile         a note or `_meta.yaml` that is not a regular file, too large, unreadable
│   └── LinkOutside        ... or a link (possibly swapped in after listing) leading out of the root
├── BadMeta                `_meta.yaml` is missing a field, not YAML, or not a mapping
└── NotFound
    └── NoCollection       the path is not inside any collection with a `_meta.yaml`
"""

from __future__ import annotations

from tideline.errors import InvalidInput, NotFound


class PathOutsideLibrary(InvalidInput):
    """A path points outside the library root."""


class BadMeta(InvalidInput):
    """A collection's `_meta.yaml` cannot be used."""


class NoCollection(NotFound):
    """A path is not inside any collection."""


class UnreadableFile(InvalidInput):
    """A file of the library that is not read: not a regular file, too large or unreadable."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class LinkOutside(UnreadableFile, PathOutsideLibrary):
    """A file is, or was swapped for, a link that leads out of the library root."""

    REASON = "links outside the library; not indexed"

    def __init__(self, path: str):
        super().__init__(path, self.REASON)
