"""Salvage: copy every row that can still be read from a damaged database into a new one.

apsw does not ship SQLite's recovery extension (`.recover`), so this does its table-level part in
Python, on a private copy of the damaged file (the original is only ever read):

- a header overwritten with zeros is rebuilt when page 1 still looks like SQLite's schema page;
- `writable_schema` lets SQLite read a truncated file up to its last page;
- rows are read in key order; at a bad page the reader skips ahead (rowid tables: probes at growing
  distances, then narrows down to the first readable row; other tables: reads backwards from the
  end), so one bad page costs the rows on that page, not the rest of the table;
- when SQLite cannot read the list of tables at all (a file cut in half loses the schema pages
  written last), the file is read page by page below SQLite (`_pages`): each table whose entry
  survives is walked from its root page, and its readable rows are copied the same way. When
  not one row can be read that way, the repair fails with the reason in one line.

The new database gets its schema from the caller's migrations; only tables that exist in both are
copied, by their common columns. Virtual tables (FTS, vectors) and their shadow tables are left
to their owners to rebuild from the copied rows.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from tideline.errors import RepairFailed
from tideline.store import MAX_ID, SQLITE_MAGIC, Database, load_vec, wal_damage, wal_path
from tideline.upkeep._pages import PageFile, page_size_of

PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536)
#: What is left to do when nothing can be recovered (the file itself is never changed).
UNRECOVERABLE = (
    "it is kept unchanged; what you can still do: copy a backup of it in its place, or move it "
    "aside and `tideline import` your last `tideline export` (JSONL) into the new memory"
)
SQLITE_VERSION = 3054001


@dataclass
class TableSalvage:
    """Rows copied from one table, and the first error met (empty when the table read cleanly)."""

    copied: int = 0
    damage: str = ""


@dataclass
class Salvage:
    header_rebuilt: bool = False
    log_used: bool = False
    tables: dict[str, TableSalvage] = field(default_factory=dict)
    source: Path | None = None  # the damaged file, as the user named it
    pages: PageFile | None = None  # set when SQLite cannot read the list of tables
    unreadable: str = ""  # why not
    schema_pages: int = 0  # pages searched for the list of tables (its root page was lost)
    migrated: set[str] | None = None  # the migration sets the file had applied, when readable

    @property
    def copied(self) -> int:
        return sum(t.copied for t in self.tables.values())


def _rebuilt_header(data: bytes) -> bytes | None:
    """A valid 100-byte header for a file whose own is gone, when the page size can be told:
    from page 1 when it still looks like the schema's page, else from the other pages."""
    sizes = [s for s in PAGE_SIZES if len(data) % s == 0 and len(data) > 100]
    size = next((s for s in sizes if data[100] in (0x05, 0x0D)), None) or page_size_of(data)
    if size is None:
        return None
    header = bytearray(100)
    header[:16] = SQLITE_MAGIC
    header[16:18] = (size if size < 65536 else 1).to_bytes(2, "big")
    header[18:24] = bytes([1, 1, 0, 64, 32, 32])  # rollback journal, no reserved bytes
    header[24:28] = header[92:96] = (1).to_bytes(4, "big")
    header[28:32] = (len(data) // size).to_bytes(4, "big")
    header[40:48] = (1).to_bytes(4, "big") + (4).to_bytes(4, "big")  # cookie, format
    header[56:60] = (1).to_bytes(4, "big")  # UTF-8
    header[96:100] = SQLITE_VERSION.to_bytes(4, "big")
    return bytes(header)


def open_damaged(path: Path, workdir: Path) -> tuple[apsw.Connection, Salvage]:
    """A connection to a private copy of `path` that SQLite will read as far as it can."""
    report = Salvage(source=path)
    copy = workdir / path.name
    shutil.copyfile(path, copy)
    if wal_path(path).exists() and wal_damage(path, deep=False) is None:
        shutil.copyfile(wal_path(path), wal_path(copy))
        report.log_used = True
    with copy.open("rb") as f:
        magic = f.read(len(SQLITE_MAGIC))
    if magic != SQLITE_MAGIC:
        header = _rebuilt_header(copy.read_bytes())
        if header is None:
            raise RepairFailed(
                f"{path} cannot be recovered: it is not SQLite and no SQLite page was found in "
                f"it; {UNRECOVERABLE}"
            )
        with copy.open("r+b") as f:
            f.write(header)
        report.header_rebuilt = True
    conn = apsw.Connection(str(copy))
    conn.execute("PRAGMA writable_schema=ON")  # read a truncated file up to its last page
    load_vec(conn)
    try:
        conn.execute("SELECT name FROM sqlite_schema").fetchall()
    except apsw.Error as exc:
        report.pages, report.unreadable = PageFile.open(copy), str(exc)
    return conn, report


def _columns(conn: apsw.Connection, table: str) -> list[tuple[str, int]]:
    """(name, position in the primary key or 0) of each column."""
    return [(r[1], r[5]) for r in conn.execute(f'PRAGMA table_xinfo("{table}")')]


def _plain_tables(db: Database) -> list[tuple[str, bool]]:
    """(name, has rowid) of the ordinary tables: no virtual tables, no shadow tables."""
    virtual = [
        r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE sql LIKE 'CREATE VIRTUAL%'")
    ]
    found = []
    for name, sql in db.execute(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        " AND name NOT LIKE 'sqlite_%' AND name != '_migrations' ORDER BY rootpage"
    ):
        if any(name.startswith(f"{v}_") for v in virtual):
            continue
        found.append((name, "WITHOUT ROWID" not in sql.upper()))
    return found


def _probe(conn: apsw.Connection, table: str, after: int) -> int | None:
    """The first rowid > `after` (None: there is none); raises where the b-tree is damaged."""
    row = conn.execute(
        f'SELECT rowid FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT 1', (after,)
    ).fetchone()
    return None if row is None else int(row[0])


def _first_readable(conn: apsw.Connection, table: str, after: int) -> int | None:
    """The smallest reachable rowid > `after`, skipping a damaged stretch of the b-tree."""
    bad, step = after, 1
    while True:  # gallop past the damage ...
        good = min(after + step, MAX_ID)
        try:
            found = _probe(conn, table, good)
            break
        except apsw.Error:
            if good == MAX_ID:
                return None
            bad, step = good, step * 2
    while good - bad > 1:  # ... then narrow down to where it ends
        mid = (bad + good) // 2
        try:
            found, good = _probe(conn, table, mid), mid
        except apsw.Error:
            bad = mid
    return found


def _quoted(names: list[str]) -> str:
    return ", ".join('"' + n.replace('"', '""') + '"' for n in names)


def _rows(
    conn: apsw.Connection, table: str, cols: list[str], pk: list[str], report: TableSalvage
) -> Iterator[tuple[object, ...]]:
    """Every readable row of `table` (rowid order; `pk` order for a WITHOUT ROWID table)."""
    select = _quoted(cols)
    if pk:
        seen: set[tuple[object, ...]] = set()
        for order in ("ASC", "DESC"):  # forwards until the damage, then backwards up to it
            by = ", ".join(f"{c} {order}" for c in _quoted(pk).split(", "))
            try:
                for row in conn.execute(f'SELECT {select} FROM "{table}" ORDER BY {by}'):
                    if row in seen:
                        return
                    seen.add(row)
                    yield row
                return
            except apsw.Error as exc:
                report.damage = report.damage or str(exc)
        return
    last, resumed_at = -MAX_ID - 1, None
    while True:
        progressed = False
        try:
            for row in conn.execute(
                f'SELECT rowid, {select} FROM "{table}" WHERE rowid > ? ORDER BY rowid', (last,)
            ):
                last, progressed = row[0], True
                yield row[1:]
            return
        except apsw.Error as exc:
            report.damage = report.damage or str(exc)
            # no row read since the last skip: the row we resumed at is itself unreadable
            after = last if progressed or resumed_at is None else resumed_at
            resumed_at = _first_readable(conn, table, after)
            if resumed_at is None:
                return
            last = resumed_at - 1


def copy_rows(src: apsw.Connection, dst: Database, report: Salvage) -> None:
    """Copy every readable row of every table both databases have (foreign keys unchecked:
    a row whose parent was lost is kept rather than dropped)."""
    dst.execute("PRAGMA foreign_keys=OFF")
    try:
        if report.pages is not None:
            _copy_pages(report.pages, dst, report)
            return
        for table, rowid in _plain_tables(dst):
            result = report.tables.setdefault(table, TableSalvage())
            try:
                have = {name for name, _ in _columns(src, table)}
            except apsw.Error as exc:
                result.damage = str(exc)
                continue
            wanted = _columns(dst.conn, table)
            cols = [name for name, _ in wanted if name in have]
            if not cols:
                continue
            pk = [] if rowid else [n for n, p in sorted(wanted, key=lambda c: c[1]) if p]
            insert = (
                f'INSERT OR IGNORE INTO "{table}"({_quoted(cols)}) '
                f"VALUES ({', '.join('?' * len(cols))})"
            )
            with dst.transaction():
                for row in _rows(src, table, cols, pk, result):
                    dst.execute(insert, row)
                    result.copied += dst.conn.changes()
    finally:
        dst.execute("PRAGMA foreign_keys=ON")


def _copy_pages(pages: PageFile, dst: Database, report: Salvage) -> None:
    """`copy_rows` for a file whose list of tables SQLite cannot read: page by page."""
    tables = _plain_tables(dst)
    schema, report.schema_pages = pages.schema({name for name, _ in tables} | {"_migrations"})
    if "_migrations" in schema:  # which tables the file ever had: a missing one may be lost
        report.migrated = {str(v[0]) for _, v in pages.rows(schema["_migrations"][0]) if v}
    for table, rowid in tables:
        result = report.tables.setdefault(table, TableSalvage())
        if table not in schema:
            result.damage = "its entry in the list of tables is lost"
            continue
        root, sql = schema[table]
        columns = _declared(sql)
        wanted = [name for name, _ in _columns(dst.conn, table)]
        common = [n for n in wanted if n in columns.names]
        if not rowid or not common:
            continue  # a WITHOUT ROWID table is an index b-tree: not read below SQLite
        pick = [columns.names.index(n) for n in common]
        insert = (
            f'INSERT OR IGNORE INTO "{table}"({_quoted(common)}) '
            f"VALUES ({', '.join('?' * len(common))})"
        )
        pages.missing.clear()
        with dst.transaction():
            for key, values in pages.rows(root):
                row = columns.complete(key, values)
                try:
                    dst.execute(insert, [row[i] for i in pick])
                except apsw.Error:
                    continue  # a row the new schema refuses (garbled types)
                result.copied += dst.conn.changes()
        if pages.missing:
            lost = sorted(pages.missing)
            result.damage = (
                f"pages {', '.join(map(str, lost[:5]))}{', …' * (len(lost) > 5)} are missing"
            )
    if not report.copied:
        raise RepairFailed(
            f"{report.source} cannot be recovered: {_why(pages, report)}, and not one row "
            f"could be read from what is left; {UNRECOVERABLE}"
        )


def _why(pages: PageFile, report: Salvage) -> str:
    announced = int.from_bytes(pages.data[28:32], "big")
    if announced > pages.pages:
        return f"it holds {pages.pages} of the {announced} pages its header announces (it was cut short)"
    return f"its list of tables is unreadable ({report.unreadable})"


@dataclass
class _Declared:
    """A table's columns as its `CREATE TABLE` declares them, and how to fill a stored row."""

    names: list[str]
    defaults: list[object]
    alias: int | None  # the INTEGER PRIMARY KEY column: stored as NULL, its value is the rowid

    def complete(self, rowid: int, values: list[object]) -> list[object]:
        """Columns added later (ALTER TABLE ... ADD) are missing from older rows: defaults."""
        row = values[: len(self.names)] + self.defaults[len(values) :]
        if self.alias is not None:
            row[self.alias] = rowid
        return row


def _declared(sql: str) -> _Declared:
    scratch = apsw.Connection(":memory:")
    try:
        scratch.execute(sql)
        (name,) = scratch.execute("SELECT name FROM sqlite_schema").fetchall()[0]
        info = list(scratch.execute(f'PRAGMA table_xinfo("{name}")'))
        defaults = [
            None if r[4] is None else scratch.execute(f"SELECT {r[4]}").fetchall()[0][0]
            for r in info
        ]
    except apsw.Error:
        return _Declared([], [], None)
    finally:
        scratch.close()
    keys = [i for i, r in enumerate(info) if r[5]]
    alias = keys[0] if len(keys) == 1 and str(info[keys[0]][2]).upper() == "INTEGER" else None
    return _Declared([str(r[1]) for r in info], defaults, alias)
