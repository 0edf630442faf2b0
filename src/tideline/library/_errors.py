"""The library's errors — defined with every other error in `tideline.errors` (the one tree):

InvalidInput
├── PathOutsideLibrary     a path escapes the library root (`../`, absolute, symlink out)
├── UnreadableFile         a note or `_meta.yaml` that is not a regular file, too large, unreadable
│   ├── LinkOutside        ... or a link (possibly swapped in after listing) leading out of the root
│   ├── FileChanged        ... changed between a writer's read and its replacement
│   └── NoteBusy           ... kept changing while it was being written (transient)
├── BadMeta                `_meta.yaml` is missing a field, not YAML, or not a mapping
└── NotFound
    └── NoCollection       the path is not inside any collection with a `_meta.yaml`
StoreError
└── IndexDirRefused        a `.memo` folder memo cannot safely write into or delete from
"""

from tideline.errors import (
    BadMeta,
    FileChanged,
    IndexDirRefused,
    LinkOutside,
    NoCollection,
    NoteBusy,
    PathOutsideLibrary,
    UnreadableFile,
)

__all__ = [
    "BadMeta",
    "FileChanged",
    "IndexDirRefused",
    "LinkOutside",
    "NoCollection",
    "NoteBusy",
    "PathOutsideLibrary",
    "UnreadableFile",
]
