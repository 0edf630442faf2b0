"""Real damage on real database files: the nine kinds `doctor` and every command must name.

Each maker takes the path of a closed, healthy database and breaks it the way disks, crashes,
copies and people do. Pages are found with SQLite's own `dbstat` before the damage.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import apsw

SEED = 9


def page_size(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[16:18], "big")


def pages_of(path: Path, name: str) -> list[int]:
    """Page numbers (1-based) of one table or index, leaves and interior pages alike."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = ?", (name,))]
    finally:
        conn.close()


def scribble(path: Path, page: int, *, start: int = 0, length: int | None = None) -> None:
    """Random bytes over one page (or part of it): a bad sector, a stray write."""
    size = page_size(path)
    rng = random.Random(SEED * 1000 + page)
    with path.open("r+b") as f:
        f.seek((page - 1) * size + start)
        f.write(rng.randbytes(length if length is not None else size - start))


def middle_of(path: Path, name: str) -> int:
    found = pages_of(path, name)
    assert found, f"{name} has no pages in {path}"
    return found[len(found) // 2]


def truncated(path: Path) -> None:
    size = page_size(path)
    pages = path.stat().st_size // size
    with path.open("r+b") as f:
        f.truncate(size * (pages // 2))


def zeroed_header(path: Path) -> None:
    with path.open("r+b") as f:
        f.write(bytes(100))


def random_middle_page(path: Path) -> None:
    scribble(path, middle_of(path, "turns"))


def empty_file(path: Path) -> None:
    path.write_bytes(b"")


def index_page(path: Path) -> None:
    scribble(path, middle_of(path, "turns_ts"))


def fts_shadow(path: Path) -> None:
    scribble(path, middle_of(path, "turn_text_fts_data"))


def wal_garbage(path: Path) -> None:
    """A log left by a crash, then overwritten with garbage from its first byte."""
    leave_wal(path)
    wal = Path(f"{path}-wal")
    with wal.open("r+b") as f:
        f.write(random.Random(SEED).randbytes(4096))


def first_page(path: Path) -> None:
    """Page 1 overwritten whole: the header and the root of the list of tables (#21)."""
    with path.open("r+b") as f:
        f.write(random.Random(SEED).randbytes(page_size(path)))


def not_sqlite(path: Path) -> None:
    path.write_text("these are my notes, not a database\n" * 200)


KINDS: dict[str, Callable[[Path], None]] = {
    "truncated": truncated,
    "zeroed-header": zeroed_header,
    "random-middle-page": random_middle_page,
    "empty": empty_file,
    "index-page": index_page,
    "fts-shadow": fts_shadow,
    "wal-garbage": wal_garbage,
    "first-page": first_page,
    "not-sqlite": not_sqlite,
}


#: Where `random_pages` puts its pages: anywhere, the first or last tenth of the file's pages in
#: use, or one contiguous run (a bad stretch of disk).
POSITIONS = ("anywhere", "front", "back", "run")


def pages_in_use(path: Path) -> list[int]:
    """Every page a table, an index or an overflow chain holds (not the free list), in order."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return sorted({r[0] for r in conn.execute("SELECT pageno FROM dbstat")})
    finally:
        conn.close()


def random_pages(path: Path, count: int, seed: int, position: str = "anywhere") -> list[int]:
    """`count` pages in use overwritten with random bytes (several bad sectors, stray writes),
    chosen by `seed` within `position`; returns the pages hit. Only pages in use are chosen, so
    every one of these damages changes what SQLite reads: none of them may be called healthy."""
    used = pages_in_use(path)
    rng = random.Random(seed)
    tenth = max(count, len(used) // 10)
    if position == "run":
        start = rng.randrange(0, max(1, len(used) - count))
        hit = used[start : start + count]
    else:
        pool = {"anywhere": used, "front": used[:tenth], "back": used[-tenth:]}[position]
        hit = sorted(rng.sample(pool, min(count, len(pool))))
    size = page_size(path)
    with path.open("r+b") as f:
        for page in hit:
            f.seek((page - 1) * size)
            f.write(rng.randbytes(size))
    return hit


def leave_wal(path: Path, rows: int = 20) -> None:
    """Write rows that stay in `<path>-wal`, as a killed process leaves them: the log is copied
    aside while the connection is open (no checkpoint) and put back after it closed."""
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE IF NOT EXISTS crash_probe(id INTEGER PRIMARY KEY, note TEXT)")
    for i in range(rows):
        conn.execute("INSERT INTO crash_probe(note) VALUES (?)", (f"written before the crash {i}",))
    snapshot = {s: Path(f"{path}{s}.snap") for s in ("", "-wal")}
    for suffix, copy in snapshot.items():
        shutil.copyfile(f"{path}{suffix}", copy)
    conn.close()
    for suffix, copy in snapshot.items():
        copy.replace(f"{path}{suffix}")
    Path(f"{path}-shm").unlink(missing_ok=True)
