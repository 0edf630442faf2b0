"""Errors of the library, all subclasses of the shared tree in `tideline.errors`.

InvalidInput
├── PathOutsideLibrary     a path escapes the library root (`../`, absolute, symlink out)
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
