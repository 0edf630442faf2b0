"""Connections: apsw + sqlite-vec, WAL, busy timeout, foreign keys, one transaction helper.

Invariants:
- Every connection runs in WAL mode so the watcher, the MCP server and the CLI can have the same
  file open; readers never block the writer.
- Writes go through `Database.transaction()`: `BEGIN IMMEDIATE` takes the write lock up front (no
  deadlocked upgrade from reader to writer); nested calls become savepoints; any exception rolls the
  whole block back, so nothing is ever written half.
- Damage is never silent and never a traceback: an existing file is checked below SQLite first
  (`_health.header_damage`: empty, not SQLite, truncated, garbage log), and every cursor turns
  SQLite's corrupt / not-a-database errors into `DatabaseDamaged` naming the file and the fix.
- A database that asks for it (the agent's `memory.db`, `check_every`) is checked whole at open
  when its last sound check is older than that, and a long-running process looks again while it
  works (`_watch`, at most once a second: damage another process found, the file replaced by a
  repair or a restore, the next check due), so a damaged or swapped file never stays in use.
- sqlite-vec is loaded when it can be. When it cannot (a Python without extension loading),
  `vec_enabled` is False and search degrades to lexical with a single warning.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import apsw

from tideline.errors import (
    DatabaseDamaged,
    DatabaseLocked,
    DatabaseReplaced,
    HomeNotWritable,
    NotADatabase,
)
from tideline.store._health import (
    REPAIR_HINT,
    check_due,
    deep_damage,
    header_damage,
    note_checked,
    remember_damage,
    remembered_damage,
)
from tideline.store._storage import Reads

log = logging.getLogger(__name__)

Params = Sequence[Any] | dict[str, Any]
#: `Database.exclusive` of a database in memory (no file to lock): a lock of this process.
_MEMORY_LOCKS: dict[str, threading.Lock] = {}
#: How often a long-running process looks at its file again (`Database._watch`), in seconds.
WATCH_SECONDS = 1.0


def load_vec(conn: apsw.Connection) -> bool:
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


def damaged(path: Path | str, what: str) -> DatabaseDamaged:
    """The one-line error for a damaged file: `NotADatabase` when it is not (ours) at all."""
    kind = NotADatabase if what.startswith(("is empty", "is not")) else DatabaseDamaged
    error = kind(f"{path} {what}; {REPAIR_HINT}")
    error.path = str(path)
    return error


class _Connection(apsw.Connection):
    """An apsw connection that knows whether damage found in its file is to be remembered."""

    remember_damage = False


DAMAGE = (apsw.NotADBError, apsw.CorruptError)


def _damage(conn: apsw.Connection, exc: apsw.Error) -> DatabaseDamaged:
    """The error for SQLite's own damage report, remembered when the connection asks for it."""
    what = (
        "is not an SQLite database (its header is damaged)"
        if isinstance(exc, apsw.NotADBError)
        else f"is damaged ({exc})"
    )
    if isinstance(conn, _Connection) and conn.remember_damage and conn.filename:
        remember_damage(Path(conn.filename), what)
    return damaged(conn.filename, what)


class _Cursor(apsw.Cursor):
    """An apsw cursor whose corruption errors name the file and the fix, wherever a query
    meets a bad page: at `execute`, or rows later while it is being iterated. (Plain
    try/except: this wraps every row, and a context manager would cost 8x per row.)"""

    def execute(self, *args: Any, **kwargs: Any) -> apsw.Cursor:
        try:
            return super().execute(*args, **kwargs)
        except DAMAGE as exc:
            raise _damage(self.connection, exc) from exc

    def executemany(self, *args: Any, **kwargs: Any) -> apsw.Cursor:
        try:
            return super().executemany(*args, **kwargs)
        except DAMAGE as exc:
            raise _damage(self.connection, exc) from exc

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except DAMAGE as exc:
            raise _damage(self.connection, exc) from exc

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except DAMAGE as exc:
            raise _damage(self.connection, exc) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except DAMAGE as exc:
            raise _damage(self.connection, exc) from exc


class Database(Reads):
    """One open SQLite file, one connection. apsw refuses two threads using it at the same
    moment (`ThreadingViolationError`), so callers that share one across threads take turns
    through a lock of their own (the app's `db_lock`, the embedding cache's)."""

    dialect: Literal["sqlite"] = "sqlite"

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout_ms: int = 5000,
        readonly: bool = False,
        remember_damage: bool = False,
        check_every: float | None = None,
    ):
        """`remember_damage`: damage found once refuses every later open (see `_health`).
        `check_every`: seconds between whole-file checks of it (None: only `doctor` checks)."""
        self.path = Path(path) if str(path) != ":memory:" else None
        flags = (
            apsw.SQLITE_OPEN_READONLY
            if readonly
            else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        self._check_every = check_every
        self._watched = remember_damage and self.path is not None
        self._next_watch = 0.0
        self._inode: int | None = None
        if self.path is not None:
            damage = header_damage(self.path) or (
                remembered_damage(self.path) if remember_damage else None
            )
            if damage is None and self.path.exists():
                damage = self._due_check()
            if damage is not None:
                raise damaged(self.path, damage)
        if self.path is not None and not readonly:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise HomeNotWritable(
                    f"cannot create folder {self.path.parent} ({exc.strerror}); "
                    "set TIDELINE_HOME to a writable folder"
                ) from exc
        try:
            self.conn = _Connection(str(path), flags=flags)
            self.conn.remember_damage = remember_damage
        except apsw.CantOpenError as exc:
            raise HomeNotWritable(
                f"cannot open database {path} ({exc}); check the folder's permissions or set TIDELINE_HOME"
            ) from exc
        self.conn.cursor_factory = _Cursor
        self.conn.set_busy_timeout(busy_timeout_ms)
        self._lock = threading.RLock()
        try:
            self.conn.execute("PRAGMA schema_version").fetchall()
            if not readonly:
                self.conn.execute("PRAGMA journal_mode=WAL").fetchall()
                self.conn.execute("PRAGMA synchronous=NORMAL")
        except DatabaseDamaged:
            self.conn.close()
            raise
        except apsw.BusyError as exc:
            self.conn.close()
            raise DatabaseLocked(
                f"{path} is locked by another process; retry when it is done"
            ) from exc
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.vec_enabled = load_vec(self.conn)
        if self.path is not None:
            with contextlib.suppress(OSError):
                self._inode = self.path.stat().st_ino

    # -- health ------------------------------------------------------------------------------
    def _due_check(self) -> str | None:
        """The whole-file check when it is due: the damage found (remembered), or None."""
        if self.path is None or self._check_every is None:
            return None
        if not check_due(self.path, self._check_every):
            return None
        damage = deep_damage(self.path)
        if damage is None:
            note_checked(self.path)
        elif self._watched:
            remember_damage(self.path, damage)
        return damage

    def _watch(self) -> None:
        """What a long-running process must notice about its open file, looked at once a second:
        damage recorded since (by `doctor` or another process), the file replaced or moved
        away (a repair, a restored backup), or the next whole-file check."""
        now = time.monotonic()
        if not self._watched or now < self._next_watch or self.path is None:
            return
        self._next_watch = now + WATCH_SECONDS
        self._same_file()
        damage = remembered_damage(self.path)
        if damage is None and self._check_every:  # 0 means at every open, not every second
            damage = self._due_check()
        if damage is not None:
            raise damaged(self.path, damage)

    def _same_file(self) -> None:
        """Refuse to go on once the path names another file: what this connection writes would
        land in its log, which the new file at the path would read as its own."""
        if not self._watched or self.path is None:
            return
        try:
            inode: int | None = os.stat(self.path).st_ino
        except OSError:
            inode = None
        if inode != self._inode:
            raise DatabaseReplaced(
                f"{self.path} was replaced or moved while this process had it open (by "
                "`tideline doctor --repair` or a restored backup); restart this process"
            )

    # -- queries -----------------------------------------------------------------------------
    def execute(self, sql: str, params: Params = ()) -> apsw.Cursor:
        """Run one statement; translate a lock timeout into `DatabaseLocked`."""
        self._watch()
        try:
            return self.conn.execute(sql, params)
        except apsw.BusyError as exc:
            raise DatabaseLocked(
                f"database {self.path} stayed locked past the busy timeout; retry, "
                "or raise TIDELINE_BUSY_TIMEOUT_MS"
            ) from exc

    def executemany(self, sql: str, seq: Sequence[Params]) -> None:
        self._watch()
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
            self._same_file()  # every write, not once a second: a stat costs microseconds
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

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A consistent read: every query inside sees one snapshot, without the write lock (a
        deferred transaction; in WAL mode readers never block the writer)."""
        if self.conn.in_transaction:
            yield
            return
        self.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")  # a read ends whatever `_watch` says meanwhile

    def lock(self, key: str) -> None:
        """Serialise the writers of `key`: `BEGIN IMMEDIATE` already serialises every writer
        of the file, so there is nothing more to take (PostgreSQL takes an advisory lock)."""

    @contextlib.contextmanager
    def exclusive(self, name: str) -> Iterator[str | None]:
        """Try to hold the database's lock `name` for the block (one sleep at a time, across
        processes): an `flock` on `<db>.<name>.lock`, which belongs to the open file, so the
        kernel drops it when the process dies (a run killed with SIGKILL leaves no stale lock).
        Yields None when the block holds it, else who does ("pid N", the pid the file holds). A
        database in memory has no file: a lock of this process ("this process")."""
        if self.path is None:
            held = _MEMORY_LOCKS.setdefault(name, threading.Lock())
            if not held.acquire(blocking=False):
                yield "this process"
                return
            try:
                yield None
            finally:
                held.release()
            return
        fd = os.open(f"{self.path}.{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            yield f"pid {holder}"
            return
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        try:
            yield None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def advance_ids(self, table: str) -> None:
        """Nothing: a new row's id follows the highest rowid in the table, ids written
        explicitly included (PostgreSQL moves its identity sequence)."""

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
