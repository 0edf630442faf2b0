"""`.memo/`: the folder memo owns, and the only place it ever writes or deletes.

The index is disposable, so memo deletes and rebuilds files in `.memo/` on its own. That is only
safe in a folder memo created. So:
- a `.memo` that is a symlink, or not a folder, is refused with an error that names the fix; memo
  never writes through it, and never deletes what is behind it;
- a folder memo creates gets a marker, `CACHEDIR.TAG` (the Cache Directory Tagging Specification,
  so backup tools skip the disposable index too); files are only removed from a marked folder;
- a folder without the marker (written by a version before the marker, or by hand) is adopted
  only when every name in it is one memo writes (`index.db*`, `state.json*`, `router.db*`,
  `writes.db*`); a
  folder holding anything else is refused, and nothing in it is touched;
- inside an owned folder, an `index.db` (or `state.json`, ...) that is a symlink is removed as a
  link (its target is never opened), and one that is an empty folder is removed; a non-empty
  folder in its place is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from tideline.errors import IndexDirRefused

MARKER = "CACHEDIR.TAG"
_MARKER_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This folder is memo's disposable index (Tideline); delete it any time, it is rebuilt\n"
    "# from the markdown. memo only writes and deletes in a .memo folder carrying this file.\n"
)
_DATABASES = ("index.db", "router.db", "writes.db")
OWN_NAMES = frozenset(
    {MARKER, "state.json", "state.json.tmp"}
    | {db + suffix for db in _DATABASES for suffix in ("", "-wal", "-shm", "-journal")}
)


_WRITABLE = "make the collection folder writable, or delete .memo, and run again"


def _refuse(folder: Path, what: str, fix: str) -> IndexDirRefused:
    return IndexDirRefused(f"{folder} {what}: {fix}")


def _write_marker(folder: Path) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(folder / MARKER, flags, 0o644)
    except FileExistsError:
        return  # another process claimed it at the same moment
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(_MARKER_TEXT)


def claim_index_dir(folder: Path, *, create: bool = True) -> bool:
    """Make sure `folder` is a `.memo` memo owns (creating it when `create`); False if absent.

    Raises `IndexDirRefused` for a symlink, a non-folder, or a folder holding foreign files.
    """
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return False
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder)
            st = os.lstat(folder)
        except OSError as exc:
            raise _refuse(folder, f"cannot be created ({exc.strerror})", _WRITABLE) from None
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(
            folder,
            "is a symlink; memo never writes its index through a link",
            f"remove the link (rm {folder}) and run again",
        )
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(
            folder, "is not a folder; memo keeps its index there", "move it away and run again"
        )
    names = set(os.listdir(folder))
    if MARKER not in names:
        foreign = sorted(names - OWN_NAMES)
        if foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise _refuse(
                folder,
                f"holds files memo did not write ({shown}); memo only writes in a .memo it owns",
                f"move them elsewhere or delete {folder}, then run again",
            )
        try:
            _write_marker(folder)
        except OSError as exc:
            raise _refuse(
                folder, f"cannot be marked as memo's ({exc.strerror})", _WRITABLE
            ) from None
    for name in sorted(names & OWN_NAMES - {MARKER}):
        path = folder / name
        if os.path.islink(path):
            path.unlink()  # the link only; whatever it points at is never opened
    return True


def remove_own(path: Path) -> None:
    """Delete one of memo's files from an owned `.memo` (a file, a link or an empty folder)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        path.unlink(missing_ok=True)
        return
    try:
        path.rmdir()
    except OSError:
        raise _refuse(
            path,
            "is a folder with files in it where memo keeps a database",
            f"delete {path.parent} (it is disposable) and run again",
        ) from None
