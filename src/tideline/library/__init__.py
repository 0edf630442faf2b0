"""The library: markdown notes as truth, indexed per collection, searched by meaning and words.

See docs/library.md for the note format and how indexing, search, the watcher and routing work.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports
from tideline.library._paths import MAX_K, MAX_READ_LINES

if _typing.TYPE_CHECKING:
    from tideline.errors import (
        BadMeta,
        IndexDirRefused,
        LinkOutside,
        NoCollection,
        PathOutsideLibrary,
        UnreadableFile,
    )
    from tideline.library._chunker import CHUNKER_VERSION, Chunk, ChunkedNote, chunk_markdown
    from tideline.library._collection_index import MAX_FILE_BYTES, CollectionIndex, SyncReport
    from tideline.library._files import read_inside
    from tideline.library._layout import Collection, Layout, Problem, scan_library
    from tideline.library._library import Library
    from tideline.library._meta import CollectionMeta, read_meta
    from tideline.library._notes import NoteText, NoteWritten
    from tideline.library._paths import resolve_inside
    from tideline.library._registry import RegistryEntry, load_registry, save_registry
    from tideline.library._router import Candidate, Router, RouteResult
    from tideline.library._watcher import Watcher

__all__ = [
    "CHUNKER_VERSION",
    "MAX_FILE_BYTES",
    "MAX_K",
    "MAX_READ_LINES",
    "BadMeta",
    "Candidate",
    "Chunk",
    "ChunkedNote",
    "Collection",
    "CollectionIndex",
    "CollectionMeta",
    "IndexDirRefused",
    "Layout",
    "Library",
    "LinkOutside",
    "NoCollection",
    "NoteText",
    "NoteWritten",
    "PathOutsideLibrary",
    "Problem",
    "RegistryEntry",
    "RouteResult",
    "Router",
    "SyncReport",
    "UnreadableFile",
    "Watcher",
    "chunk_markdown",
    "load_registry",
    "read_inside",
    "read_meta",
    "resolve_inside",
    "save_registry",
    "scan_library",
]

__getattr__, __dir__ = _lazy_exports(__name__)
