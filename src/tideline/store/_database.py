"""Connections: apsw + sqlite-vec, WAL, busy timeout, foreign keys, one transaction helper.

Invariants:
- Every connection runs in WAL mode so the watcher, the MCP server and the CLI can have the same
  file open; readers never block the writer.
- Writes go through `Database.transaction()`: `BEGIN IMMEDIATE` takes the write lock up front (no
  deadlocked upgrade from reader to writer); nested calls become savepoints; any exception rolls the
  whole block back, so nothing is ever written half.
- sqlite-vec is loaded when it can be. When it cannot (a Python without extension loading),
  `vec_enabled` is False and search degrades to lexical with a single warning.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw

from tideline.errors import DatabaseLocked, HomeNotWritable, NotADatabase

log = logging.getLogger(__name__)

Params = Sequence[Any] | dict[str, Any]


def _load_vec(conn: apsw.Connection) -> bool:
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        return True
    except Exception as exc:  # any failure means: no vectors, keep going lexically
        log.warning(
            "sqlite-vec could not be loaded (%s); vector search is off. "
            "Fix: pip install --force-reinstall sqlite-vec",
            exc,
        )
        return False


class Database:
    """One open SQLite file. Thread-safe for the simple calls below (apsw serialises)."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = 5000, readonly: bool = False):
        self.path = Path(path) if str(path) != ":memory:" else None
        flags = (
            apsw.SQLITE_OPEN_READONLY
            if readonly
            else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        if self.path is not None and not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HomeNotWritable(
                    f"cannot create folder {self.path.parent} ({exc.strerror}); "
                    "set TIDELINE_HOME to a writable folder"
                ) from exc
        try:
            self.conn = apsw.Connection(str(path), flags=flags)
        except apsw.CantOpenError as exc:
            raise HomeNotWritable(
                f"cannot open database {path} ({exc}); check the folder's permissions or set TIDELINE_HOME"
            ) from exc
        self.conn.set_busy_timeout(busy_timeout_ms)
        self._lock = threading.RLock()
        try:
            self.conn.execute("PRAGMA schema_version").fetchall()
            if not readonly:
                self.conn.execute("PRAGMA journal_mode=WAL").fetchall()
                self.conn.execute("PRAGMA synchronous=NORMAL")
        except apsw.NotADBError as exc:
            self.conn.close()
            raise NotADatabase(
                f"{path} is not an SQLite database; move it aside or point TIDELINE_HOME elsewhere"
            ) from exc
        except apsw.BusyError as exc:
            self.conn.close()
            raise DatabaseLocked(
                f"{path} is locked by another process; retry when it is done"
            ) from exc
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.vec_enabled = _load_vec(self.conn)

    # -- queries -----------------------------------------------------------------------------
    def execute(self, sql: str, params: Params = ()) -> apsw.Cursor:
        """Run one statement; translate a lock timeout into `DatabaseLocked`."""
        try:
            return self.conn.execute(sql, params)
        except apsw.BusyError as exc:
            raise DatabaseLocked(
                f"database {self.path} stayed locked past the busy timeout; retry, "
                "or raise TIDELINE_BUSY_TIMEOUT_MS"
            ) from exc

    def executemany(self, sql: str, seq: Sequence[Params]) -> None:
        try:
            self.conn.executemany(sql, seq)
        except apsw.BusyError as exc:
            raise DatabaseLocked(
                f"database {self.path} stayed locked past the busy timeout"
            ) from exc

    def rows(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        """All rows as dicts keyed by column name."""
        cur = self.execute(sql, params)
        first = cur.fetchone()
        if first is None:
            return []
        names = [d[0] for d in cur.getdescription()]  # only valid while the statement runs
        return [dict(zip(names, row, strict=True)) for row in (first, *cur)]

    def one(self, sql: str, params: Params = ()) -> dict[str, Any] | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Params = ()) -> Any:
        row = self.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def table_exists(self, name: str) -> bool:
        return bool(self.scalar("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)))

    # -- transactions ------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[Database]:
        """All-or-nothing block. Outermost: BEGIN IMMEDIATE; nested: a savepoint."""
        with self._lock:
            if self.conn.in_transaction:
                with self.conn:  # apsw: savepoint, rolled back on exception
                    yield self
                return
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except apsw.BusyError as exc:
                raise DatabaseLocked(
                    f"database {self.path} is being written by another process; retry, "
                    "or raise TIDELINE_BUSY_TIMEOUT_MS"
                ) from exc
            try:
                yield self
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                try:
                    self.conn.execute("COMMIT")
                except apsw.BusyError as exc:
                    self.conn.execute("ROLLBACK")
                    raise DatabaseLocked(f"could not commit to {self.path}: locked; retry") from exc

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
