"""Paths from callers, checked as names before any file system call sees them.

`os.stat` raises `ValueError` on a NUL byte, `UnicodeEncodeError` on a lone surrogate that is not
an undecodable byte, and `OSError(ENAMETOOLONG)` on a name past the OS limit; none of those says
which argument was wrong. `check_path_name` turns each into one `InvalidInput` naming the path.
"""

from __future__ import annotations

import os
from pathlib import Path

from tideline.errors import InvalidInput

NAME_MAX = 255  # bytes in one path component (Linux, macOS, Windows)
PATH_MAX = 4096  # bytes in a whole path (Linux; macOS allows 1024 and reports the rest itself)


def shown(path: str | Path) -> str:
    """The path for an error message: quoted, and cut when it is long."""
    text = str(path)
    return repr(text) if len(text) <= 120 else f"{text[:60]!r}… ({len(text):,} characters)"


def check_path_name(path: str | Path, what: str = "path") -> None:
    """`InvalidInput` when no file can have this name (checked without touching the disk)."""
    text = str(path)
    if "\x00" in text:
        raise InvalidInput(
            f"{what} {shown(text)} contains a NUL byte, which no file name can; fix the {what}"
        )
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{what} {shown(text)} contains a lone surrogate, which no file name can; fix the {what}"
        ) from None
    if len(raw) > PATH_MAX or any(len(part) > NAME_MAX for part in raw.split(b"/")):
        raise InvalidInput(
            f"{what} {shown(text)} is longer than the OS allows ({NAME_MAX} bytes a name, "
            f"{PATH_MAX} a path); fix the {what}"
        )
