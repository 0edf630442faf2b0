"""Seals of the disposable search files (the vector and lexical files beside an SQLite database):
what each file held when it was written, checked before anything reads or maps it.

A native reader trusts its bytes: usearch maps `graph.usearch` and follows its links (damaged
links are a SIGSEGV, again after every restart), numpy reads `ids.npy` and `vectors.f32` as they
are (damaged rows are wrong answers without a word), tantivy panics or ranks wrongly on a damaged
segment. So the step that writes a file also writes its seal — size, SHA-256 of the content, and
the inode, mtime and ctime it had — into the manifest the reader opens first (`meta.json` of a
vector generation, `<name>.state` of a lexical one), and the manifest carries a digest of its own
text, so a damaged manifest reads as damaged too.

The cost: a file whose inode, size, mtime and ctime are the ones sealed is taken as sealed (a
write to a file changes its mtime and ctime, and no program can set a ctime back), so an open
costs one `stat` per file; a file whose stat moved (touched, copied back) is read whole and
hashed once (SHA-256, ~0.7 GB/s a core here: ~3 s for the 2 GB of a million 384-dim turns), and
its manifest is re-sealed so the next open is a stat again. `doctor` always hashes every file:
damage below the file system (a flipped bit on the disk) leaves the stat as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20

#: A file's seal: [size, inode, mtime_ns, ctime_ns, sha256 hex].
Seal = list[Any]


def stat_of(path: Path) -> list[int]:
    """What a seal records of a file besides its digest: size, inode, mtime, ctime."""
    st = path.stat()
    return [int(st.st_size), int(st.st_ino), int(st.st_mtime_ns), int(st.st_ctime_ns)]


def content_digest(path: Path) -> str:
    """SHA-256 of the file's bytes, read a megabyte at a time."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def seal_files(
    folder: Path, names: Iterable[str], known: Mapping[str, Seal] | None = None
) -> dict[str, Seal]:
    """The seal of each named file of `folder`; a file `known` already sealed whose stat has
    not moved keeps its digest (tantivy's segment files never change once written)."""
    out: dict[str, Seal] = {}
    for name in names:
        path = folder / name
        stat = stat_of(path)
        old = (known or {}).get(name)
        out[name] = old if old is not None and old[:4] == stat else [*stat, content_digest(path)]
    return out


def moved(folder: Path, files: Mapping[str, Seal]) -> bool:
    """Whether any of the sealed files' stat is not the one sealed (one `stat` each, no read)."""
    try:
        return any(stat_of(folder / name) != seal[:4] for name, seal in files.items())
    except OSError:
        return True


def check_files(
    folder: Path, files: Mapping[str, Seal], *, full: bool = False
) -> tuple[str | None, dict[str, Seal]]:
    """(what is wrong, or None; the seals with the stats as found). A file is read and hashed
    only when its stat moved, or always when `full`; the caller re-seals when the returned seals
    differ from `files` (a whole file whose stat moved)."""
    now: dict[str, Seal] = {}
    for name, seal in files.items():
        problem, stat = _file_problem(folder / name, seal, full)
        if problem is not None:
            return f"{name} {problem}", dict(files)
        now[name] = [*stat, seal[4]]
    return None, now


def _file_problem(path: Path, seal: Seal, full: bool) -> tuple[str | None, list[int]]:
    """(what is wrong with the file, or None; its stat)."""
    try:
        stat = stat_of(path)
        if stat[0] != seal[0]:
            return f"has {stat[0]} bytes, {seal[0]} were written", stat
        if (full or stat != seal[:4]) and content_digest(path) != seal[4]:
            return "does not match its checksum (not the file that was written)", stat
    except FileNotFoundError:
        return "is missing", []
    except (OSError, IndexError, TypeError):
        return "cannot be read", []
    return None, stat


def sealed_text(payload: Mapping[str, Any]) -> str:
    """`payload` as JSON with a digest of its own text (key `seal`)."""
    body = json.dumps(dict(payload), sort_keys=True)
    return json.dumps({**payload, "seal": hashlib.sha256(body.encode()).hexdigest()})


def unsealed(text: str) -> dict[str, Any] | None:
    """The payload `sealed_text` wrote, or None when the text is not one whole."""
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    seal = raw.pop("seal", None)
    body = json.dumps(raw, sort_keys=True)
    return raw if seal == hashlib.sha256(body.encode()).hexdigest() else None


def write_atomically(path: Path, text: str) -> None:
    """Replace `path` with `text` whole (a reader sees the old text or the new, never a part)."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    tmp.write_text(text, "utf-8")
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    tmp.replace(path)
