"""The library's fixed names and bounds, and path safety: every path a caller hands us is resolved
against the library root and refused when it leaves it. Symlinks are resolved first, so a link
pointing out of the root is refused too.

Light on purpose (errors and path names only): the drivers' argument specs (`tideline.fields`)
read the bounds on a request without importing the index and its parsers.
"""

from __future__ import annotations

from pathlib import Path

from tideline.errors import InvalidInput, PathOutsideLibrary
from tideline.pathnames import check_path_name, shown

META_FILE = "_meta.yaml"
REGISTRY_FILE = "_registry.yaml"
INBOX_FILE = "inbox.md"
INDEX_DIR = ".memo"
MAX_DEPTH = 2
MAX_K = 100  # results per search or route: more is a dump, not an answer
MAX_READ_LINES = 400  # lines one read returns


def resolve_inside(root: Path, user_path: str | Path) -> Path:
    """Resolve `user_path` (relative to `root`) and refuse anything outside `root`.

    Absolute paths are accepted only when they already lie inside the root; `..` segments and
    symlinks are resolved before the check.
    """
    root = root.resolve()
    raw = str(user_path).strip()
    if raw in ("", ".", "*"):
        return root
    check_path_name(raw)
    try:
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = root / candidate
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as exc:  # too long once joined to the root; `~nosuchuser`
        reason = exc.strerror if isinstance(exc, OSError) else str(exc).rstrip(".")
        raise InvalidInput(
            f"path {shown(raw)} cannot be resolved ({reason}); fix the path"
        ) from None
    if resolved != root and root not in resolved.parents:
        raise PathOutsideLibrary(
            f"path {shown(raw)} resolves to {shown(resolved)}, outside the library root {root}; "
            "pass a path relative to the root (no '..', no absolute paths or links leading out)"
        )
    return resolved


def is_hidden(name: str) -> bool:
    """Dot-folders (`.memo`, `.git`, `.obsidian`) are never part of the library."""
    return name.startswith(".")
