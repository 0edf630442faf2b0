"""Copying an agent database's rows between engines, resumably, and checking the copy.

The store copies rows it does not interpret: the tables and their columns are read from the
SQLite side's schema (either end of a move is SQLite), in creation order, so a table comes after
the tables it references. Search tables are left out (their owners rebuild them: see
`tideline.upkeep` `migrate`). Each batch is one transaction on the target, and every insert skips a row
that is already there, so running a copy again resumes it:
- a table keyed by an integer `id` continues after the target's highest id (batches commit in id
  order); a column referencing its own table or a later one (a narrative's `superseded_by`) is
  written as NULL first and filled in by a second pass, once every row it may point at exists;
- another table is read in primary-key order and inserted whole again (duplicates are skipped).
The target then numbers new rows past the copied ids (`advance_ids`), so they never collide.

`digest` is the proof: the row count and a SHA-256 over the rows, each value in a canonical form
(JSON; bytes as hex), computed the same way on both engines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tideline.store import Database, Storage

#: Tables of the search side (their owners rebuild them) and bookkeeping each end keeps itself.
_INDEX_SUFFIXES = ("_fts", "_tri", "_vec", "_vecpart", "_veclog", "_lexlog")
_SKIPPED = {"_migrations", "vector_spaces"}

#: Called after each batch with (table, rows copied so far, rows in the source).
CopyProgress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class TableShape:
    """A table as the copy sees it: columns, key columns, and the columns filled in later."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]
    later: tuple[str, ...] = ()

    @property
    def by_id(self) -> bool:
        return self.key == ("id",)


@dataclass
class TableCopy:
    """One table's copy: rows in the source, rows copied by this run, digests of both ends."""

    table: str
    source_rows: int = 0
    copied: int = 0
    target_rows: int = 0
    source_sha256: str = ""
    target_sha256: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (self.source_rows, self.source_sha256) == (self.target_rows, self.target_sha256)


def table_shapes(db: Database) -> list[TableShape]:
    """The copyable tables of an SQLite agent database, parents before children."""
    rows = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY rowid"
    ).fetchall()
    virtual = [n for n, sql in rows if str(sql).upper().startswith("CREATE VIRTUAL")]
    order = [str(n) for n, _ in rows]
    shapes = []
    for name in order:
        if (
            name in _SKIPPED
            or name.endswith(_INDEX_SUFFIXES)
            or any(name.startswith(f"{v}_") for v in virtual)
        ):
            continue
        info: list[tuple[Any, ...]] = db.execute(f'PRAGMA table_info("{name}")').fetchall()
        columns = tuple(str(r[1]) for r in info)
        key = tuple(str(r[1]) for r in sorted(info, key=lambda r: int(r[5])) if r[5]) or columns
        later = tuple(
            str(fk[3])
            for fk in db.execute(f'PRAGMA foreign_key_list("{name}")').fetchall()
            if fk[2] not in order or order.index(str(fk[2])) >= order.index(name)
        )
        shapes.append(TableShape(name, columns, key, later))
    return shapes


def _quoted(names: tuple[str, ...]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _batches(db: Storage, shape: TableShape, start: int, size: int) -> Iterator[list[Any]]:
    """The source rows in key order, `size` at a time (after id `start` when keyed by id)."""
    cols, key = _quoted(shape.columns), _quoted(shape.key)
    offset = 0
    while True:
        if shape.by_id:
            rows = db.execute(
                f'SELECT {cols} FROM "{shape.name}" WHERE id > ? ORDER BY id LIMIT ?',
                (start, size),
            ).fetchall()
            start = rows[-1][0] if rows else start
        else:
            rows = db.execute(
                f'SELECT {cols} FROM "{shape.name}" ORDER BY {key} LIMIT ? OFFSET ?',
                (size, offset),
            ).fetchall()
            offset += len(rows)
        if not rows:
            return
        yield [list(r) for r in rows]


def copy_table(
    src: Storage,
    dst: Storage,
    shape: TableShape,
    *,
    batch: int = 2000,
    progress: CopyProgress | None = None,
) -> TableCopy:
    """Copy one table's rows that the target lacks (see the module docstring)."""
    report = TableCopy(shape.name)
    report.source_rows = int(src.scalar(f'SELECT count(*) FROM "{shape.name}"'))
    start = (
        int(dst.scalar(f'SELECT coalesce(max(id), 0) FROM "{shape.name}"')) if shape.by_id else 0
    )
    marks = ", ".join("?" * len(shape.columns))
    insert = (
        f'INSERT INTO "{shape.name}"({_quoted(shape.columns)}) VALUES ({marks})'
        " ON CONFLICT DO NOTHING"
    )
    blank = [shape.columns.index(c) for c in shape.later]
    done = int(dst.scalar(f'SELECT count(*) FROM "{shape.name}"'))
    for rows in _batches(src, shape, start, batch):
        for row in rows:
            for i in blank:
                row[i] = None
        with dst.transaction():
            dst.executemany(insert, rows)
        report.copied += len(rows)
        if progress is not None:
            progress(shape.name, min(done + report.copied, report.source_rows), report.source_rows)
    if shape.later:
        _fill_later(src, dst, shape, batch)
    if shape.by_id:
        dst.advance_ids(shape.name)  # new rows are numbered past the copied ids
    return report


def _fill_later(src: Storage, dst: Storage, shape: TableShape, batch: int) -> None:
    """The second pass: the columns written as NULL, now that every row they point at exists."""
    cols = _quoted(shape.later)
    anyset = " OR ".join(f'"{c}" IS NOT NULL' for c in shape.later)
    keys = " AND ".join(f'"{k}" = ?' for k in shape.key)
    sets = ", ".join(f'"{c}" = ?' for c in shape.later)
    rows = src.execute(
        f'SELECT {cols}, {_quoted(shape.key)} FROM "{shape.name}" WHERE {anyset}'
    ).fetchall()
    for start in range(0, len(rows), batch):
        with dst.transaction():
            dst.executemany(
                f'UPDATE "{shape.name}" SET {sets} WHERE {keys}',
                [list(r) for r in rows[start : start + batch]],
            )


def _canonical(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    return value


def digest(db: Storage, shape: TableShape, batch: int = 5000) -> tuple[int, str]:
    """(rows, SHA-256 over the sorted SHA-256s of the rows): equal on both ends of a faithful
    copy. Sorting the row digests, not the rows, keeps it free of each engine's text collation."""
    found: list[bytes] = []
    for rows in _batches(db, shape, 0, batch):
        found += [
            hashlib.sha256(
                json.dumps([_canonical(v) for v in row], ensure_ascii=False).encode()
            ).digest()
            for row in rows
        ]
    return len(found), hashlib.sha256(b"".join(sorted(found))).hexdigest()
