"""Paths from callers, checked as names before any file system call sees them.

`os.stat` raises `ValueError` on a NUL byte, `UnicodeEncodeError` on a lone surrogate that is not
an undecodable byte, and `OSError(ENAMETOOLONG)` on a name past the OS limit; none of those says
which argument was wrong. `check_path_name` turns each into one `InvalidInput` naming the path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
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


#: An absolute path in a message: a `/` at the start or after a space, quote, `(` or `=` (so not
#: the path of a URL), up to a space, quote, comma, semicolon or parenthesis.
_ABSOLUTE = re.compile(r"(?:(?<=^)|(?<=[\s'\"(=]))/[^\s'\",;()]+")


def hide_paths(text: str, roots: Sequence[tuple[Path, str]]) -> str:
    """`text` with the server's file system paths hidden, for someone who only holds a token
    (the REST API, MCP over HTTP): a path under one of `roots` becomes its label and the rest
    (`/srv/agents/ana/notes/work/x.md` → `<library>/work/x.md`), any other absolute path of the
    file system `<server path>`. Route paths (`/api/docs`) and URLs are left as they are."""
    known = sorted(
        ((str(r), label) for r, label in roots if str(r) not in ("", "/")), key=lambda x: -len(x[0])
    )

    def swap(match: re.Match[str]) -> str:
        path = match.group().rstrip(".:")  # the sentence's punctuation stays
        tail = match.group()[len(path) :]
        for root, label in known:
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return label + path[len(root.rstrip("/")) :] + tail
        top = path.split("/")[1]
        return ("<server path>" if top and os.path.exists(f"/{top}") else path) + tail

    return _ABSOLUTE.sub(swap, text)
