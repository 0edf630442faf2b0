"""Damage checks on a database file, below SQLite: what a silent open would hide.

SQLite opens a 0-byte file as a new empty database, ignores a write-ahead log whose header or
frames are garbage (the writes in it vanish without an error), and reads missing pages of a
truncated file as zeros until some query trips over them. These checks look at the bytes first:

- `header_damage` reads at most 100 bytes of the file, and the write-ahead log when one lies
  beside it; every `Database` open runs it.
- `wal_damage(deep=True)` walks and checksums every frame of the log (numpy: ~2 ms for a 4 MB
  log, the size SQLite checkpoints at). Every open runs it, before SQLite reads the log: the
  first connection replays the log up to its first bad frame and the next checkpoint drops what
  follows, so a damaged frame with committed writes after it (lost writes, issue 31) must be
  found before anything opens the file or it is never found. `doctor` runs it too, together with
  `quick_check` (SQLite's own page-level check, O(size of the file)).

Every check here only reads; none of them opens the database for writing. Damage met once is
remembered next to the file (`<file>.damage.json`, keyed by its inode) for databases that ask for
it, so a bad page that one command tripped over stops every later command too, until a backup is
restored (a new inode), `doctor --repair` moves the file aside, or `doctor` finds it sound again.
Such databases are also checked whole every so often without being asked (`check_due`; the last
sound check is noted in `<file>.checked.json`), so a bad page no query reads is found within a day.
"""

from __future__ import annotations

import functools
import json
import os
import struct
from pathlib import Path
from typing import BinaryIO

import apsw
import numpy as np

from tideline.clock import from_text, now_text, system_clock

SQLITE_MAGIC = b"SQLite format 3\x00"
WAL_MAGICS = {0x377F0682: "<", 0x377F0683: ">"}  # low bit: checksums in big-endian words
WAL_VERSION = 3007000
WAL_HEADER = 32
FRAME_HEADER = 24
REPAIR_HINT = "restore it from a backup or run `tideline doctor --repair` (it keeps this file)"


def _page_size(raw: int) -> int | None:
    size = 65536 if raw == 1 else raw
    return size if 512 <= size <= 65536 and size & (size - 1) == 0 else None


def wal_path(path: Path) -> Path:
    return Path(f"{path}-wal")


def header_damage(path: Path) -> str | None:
    """How the file (or its WAL) is damaged, as the middle of a sentence; None when it looks whole.

    A missing file is not damage (it will be created). Truncation is only judged while no WAL
    holds frames: during a checkpoint page 1 may already announce pages not yet written.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(100)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except IsADirectoryError:
        return "is not a database file (a folder is in its place)"
    if size == 0:
        return "is empty (0 bytes), not a Tideline database"
    if not head.startswith(SQLITE_MAGIC):
        return "is not an SQLite database (its header is damaged or it is another kind of file)"
    page = _page_size(int.from_bytes(head[16:18], "big")) if len(head) == 100 else None
    if page is None:
        return "has a damaged header (no valid page size)"
    wal = wal_path(path)
    wal_in_use = wal.exists() and wal.stat().st_size > 0
    announced = int.from_bytes(head[28:32], "big")
    if not wal_in_use and (size % page or (head[24:28] == head[92:96] and announced * page > size)):
        return f"is truncated ({size} bytes, the header announces {announced * page})"
    return wal_damage(path) if wal_in_use else None


def _checksum(data: bytes, order: str, s0: int = 0, s1: int = 0) -> tuple[int, int]:
    """SQLite's WAL checksum (pairs of 32-bit words, Fibonacci-weighted), continued from s0, s1."""
    rows = np.frombuffer(data, dtype=np.uint8).reshape(1, len(data))
    return _continued((s0, s1), _partial_sums(rows, order)[0], len(data) // 8)


def _partial_sums(rows: np.ndarray, order: str) -> list[tuple[int, int]]:
    """Each row's checksum as if started from (0, 0), for `_continued` to carry on from sums.

    Each pair of words (a, b) maps the sums by s0 += a + s1; s1 += b + s0, that is
    v -> M v + (a, a + b) with M = [[1, 1], [1, 2]]; n pairs make M^n v plus the sum of
    M^(n-1-i) (a_i, a_i + b_i): a matrix product over every frame at once instead of a Python
    step per word (~60x faster: ~2 ms for a 4 MB log). uint64 arithmetic wraps at 2^64, which
    keeps every sum right modulo 2^32."""
    words = np.ascontiguousarray(rows).view(f"{order}u4")
    if order != "=" and words.dtype.byteorder not in ("=", "|"):
        words = words.astype(np.uint32)  # the machine's order: the products below are faster
    a, b = words[:, 0::2], words[:, 1::2]
    ab = a + b  # uint32: wraps at 2^32, as the checksum does
    powers = _powers(a.shape[1])[0]
    t0 = a @ powers[:, 0] + ab @ powers[:, 1]
    t1 = a @ powers[:, 2] + ab @ powers[:, 3]
    return list(zip((t0 & 0xFFFFFFFF).tolist(), (t1 & 0xFFFFFFFF).tolist(), strict=True))


def _continued(sums: tuple[int, int], partial: tuple[int, int], pairs: int) -> tuple[int, int]:
    """The checksum of a row whose `_partial_sums` is `partial`, carried on from `sums`."""
    m = _powers(pairs)[1]
    s0, s1 = sums
    return (m[0] * s0 + m[1] * s1 + partial[0]) & 0xFFFFFFFF, (
        m[2] * s0 + m[3] * s1 + partial[1]
    ) & 0xFFFFFFFF


@functools.cache
def _powers(pairs: int) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """M^(pairs-1-i) for each pair i (columns m00, m01, m10, m11), and M^pairs."""
    mask = 0xFFFFFFFF
    out = np.empty((pairs, 4), dtype=np.uint64)
    m = (1, 0, 0, 1)
    for k in range(pairs):
        out[pairs - 1 - k] = m
        m = (
            (m[0] + m[1]) & mask,
            (m[0] + 2 * m[1]) & mask,
            (m[2] + m[3]) & mask,
            (m[2] + 2 * m[3]) & mask,
        )
    return out, m


def wal_damage(path: Path, *, deep: bool = True) -> str | None:
    """How `<path>-wal` is damaged, or None. `deep` also checks every frame (reads the whole log).

    Frames past the last valid commit are normal (a log is reused from its start after each
    checkpoint, and a crash can tear the last transaction). Damage is a bad header, or a frame of
    the current log that fails its checksum while a later commit of the same log follows it:
    SQLite would silently drop that later, acknowledged write. A frame found bad is read again
    once, so a frame another process was writing at that moment is not taken for damage.
    """
    damage = _wal_damage(path, deep)
    return damage if damage is None or not deep else _wal_damage(path, deep)


def _wal_damage(path: Path, deep: bool) -> str | None:
    wal = wal_path(path)
    try:
        with wal.open("rb") as f:
            header = f.read(WAL_HEADER)
            if len(header) < WAL_HEADER:
                return None  # empty or never written: nothing in it to lose
            magic, version, raw_page, _, salt1, salt2, c0, c1 = struct.unpack(">8I", header)
            order = WAL_MAGICS.get(magic)
            page = _page_size(raw_page)
            if (
                order is None
                or version != WAL_VERSION
                or page is None
                or _checksum(header[:24], order) != (c0, c1)
            ):
                return f"has a damaged write-ahead log {wal.name} (bad header)"
            if not deep:
                return None
            return _frames_damage(f, wal.name, order, page, (salt1, salt2), (c0, c1))
    except FileNotFoundError:
        return None


#: Frames read and checksummed at a time (4 MB of 4 KB pages).
_FRAMES_AT_ONCE = 1000


def _frames_damage(
    f: BinaryIO, name: str, order: str, page: int, salts: tuple[int, int], sums: tuple[int, int]
) -> str | None:
    size = FRAME_HEADER + page
    frame = 0
    broken_at = 0
    after, commits = 0, 0  # frames of this log after the bad one, and the commits among them
    while count := len(chunk := f.read(size * _FRAMES_AT_ONCE)) // size:
        rows = np.frombuffer(chunk, dtype=np.uint8, count=count * size).reshape(count, size)
        heads = rows[:, :FRAME_HEADER].copy().view(">u4").tolist()
        partials = _partial_sums(np.concatenate([rows[:, :8], rows[:, FRAME_HEADER:]], 1), order)
        for (number, commit, salt1, salt2, c0, c1), partial in zip(heads, partials, strict=True):
            frame += 1
            if (salt1, salt2) != salts:
                continue  # a frame of an earlier generation of the log
            if broken_at:
                after += 1
                commits += commit != 0
                continue
            sums = _continued(sums, partial, (8 + page) // 8)
            if sums != (c0, c1) or number == 0:
                broken_at = frame
        if count < _FRAMES_AT_ONCE:
            break
    if not commits:
        return None
    return (
        f"has a damaged write-ahead log {name} (frame {broken_at} fails its checksum; the"
        f" {after} frames after it hold {commits} committed transactions, which SQLite drops"
        " at the next open)"
    )


def quick_check(path: Path, *, max_errors: int = 5) -> list[str]:
    """SQLite's `PRAGMA quick_check`: [] when the pages are sound.

    Read-only while a log lies beside the file, so doctor never checkpoints, truncates or
    deletes a log it is judging. Without one, a read-only connection to a WAL file would leave
    an empty `-wal` and `-shm` behind (it cannot remove what it creates), so the connection may
    write but its statements may not (`query_only`): closing it removes both again.
    """
    logged = any(Path(f"{path}{s}").exists() for s in ("-wal", "-journal"))
    flags = apsw.SQLITE_OPEN_READONLY if logged else apsw.SQLITE_OPEN_READWRITE
    try:
        conn = apsw.Connection(str(path), flags=flags)
    except apsw.Error as exc:
        return [f"cannot be opened ({exc})"]
    try:
        conn.execute("PRAGMA query_only=ON")
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA quick_check({max_errors})")]
    except apsw.Error as exc:
        return [" ".join(str(exc).split())]
    finally:
        conn.close()
    return [] if rows == ["ok"] else quick_check_problems(rows)


def quick_check_problems(rows: list[str]) -> list[str]:
    """The problems in `quick_check`'s rows, one line each. SQLite puts them all in one row,
    lines headed `*** in database main ***`; the header goes, the lines stay, and rows that say
    anything but "ok" are never read as healthy (unknown wording is kept whole)."""
    lines = [" ".join(line.split()) for row in rows for line in row.splitlines()]
    found = [line for line in lines if line and not line.startswith("*** in database")]
    return found or [" ".join(" ".join(rows).split()) or "no answer"]


def check_file(path: Path) -> list[str]:
    """Everything wrong with an existing database file ([] = healthy): header, log, pages."""
    damage = header_damage(path) or deep_damage(path)
    return [damage] if damage else []


def deep_damage(path: Path) -> str | None:
    """The checks that read the whole file: every frame of the log, then `quick_check`."""
    damage = wal_damage(path, deep=True)
    if damage is not None:
        return damage
    found = quick_check(path)
    return f"fails quick_check ({'; '.join(found)})" if found else None


def damage_note(path: Path) -> Path:
    return Path(f"{path}.damage.json")


def remember_damage(path: Path, damage: str) -> None:
    """Record damage found in `path` (best effort: a read-only folder just forgets)."""
    try:
        note = {
            "inode": path.stat().st_ino,
            "found": now_text(system_clock),
            "damage": damage,
        }
        damage_note(path).write_text(json.dumps(note) + "\n", encoding="utf-8")
    except OSError:
        pass


def remembered_damage(path: Path) -> str | None:
    """The damage recorded for this very file (same inode), as the middle of a sentence."""
    try:
        note = json.loads(damage_note(path).read_text(encoding="utf-8"))
        if note["inode"] != path.stat().st_ino:
            return None
        return f"{note['damage']} (found {note['found']}; `tideline doctor` re-checks it)"
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget_damage(path: Path) -> None:
    damage_note(path).unlink(missing_ok=True)


def checked_note(path: Path) -> Path:
    return Path(f"{path}.checked.json")


def note_checked(path: Path) -> None:
    """Record that this very file (its inode) was just found sound (best effort)."""
    try:
        note = {"inode": path.stat().st_ino, "checked": now_text(system_clock)}
        tmp = checked_note(path).with_name(f".{checked_note(path).name}.{os.getpid()}")
        tmp.write_text(json.dumps(note) + "\n", encoding="utf-8")
        os.replace(tmp, checked_note(path))
    except OSError:
        pass


def check_due(path: Path, every: float) -> bool:
    """Whether `path` was last found sound more than `every` seconds ago (or never, or that
    check was of another file at the same path)."""
    try:
        note = json.loads(checked_note(path).read_text(encoding="utf-8"))
        if note["inode"] != path.stat().st_ino:
            return True
        age = system_clock() - from_text(str(note["checked"]))
        return bool(age.total_seconds() >= every)
    except (OSError, ValueError, KeyError, TypeError):
        return True
