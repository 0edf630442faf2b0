"""`PgDatabase`: the agent database in PostgreSQL (psycopg 3 pool, pgvector), one namespace.

Invariants:
- A namespace (an agent, optionally a user) is one schema; every pooled connection has its
  `search_path` pinned to it (then `public`, where the `vector` type lives). Nothing an owner
  writes names a schema, so no statement can reach another namespace's rows.
- Outside a transaction each statement runs on a pooled connection in autocommit and its rows
  are read whole before the connection goes back. `transaction()` holds one connection for the
  calling thread until the block ends: nested blocks are savepoints, an exception rolls the
  whole block back — the same contract as `Database.transaction()`.
- `lock(key)` takes a transaction-scoped advisory lock: writers of one session key take turns
  (on SQLite, `BEGIN IMMEDIATE` already serialises every writer).
- Migrations run under a database-wide advisory lock (`migrating`), so several processes may
  open one namespace for the first time at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool, PoolTimeout

from tideline.errors import DatabaseLocked, StoreError
from tideline.store._dialect import to_postgres
from tideline.store._pg_namespace import Namespace, connect_error, shown_url
from tideline.store._storage import Reads

Params = Sequence[Any] | dict[str, Any]

#: The advisory lock key under which migrations run (any fixed number; "tideline" in ASCII).
_MIGRATION_LOCK = 0x746964656C696E65


def _lock_key(text: str) -> int:
    """An advisory lock's bigint key for a name."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") - (1 << 63)


class _Rows:
    """A statement's rows, read whole: what callers of `execute` iterate or fetch."""

    def __init__(self, rows: list[tuple[Any, ...]], names: list[str]):
        self._rows = rows
        self._names = names
        self._next = 0

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return self

    def __next__(self) -> tuple[Any, ...]:
        if self._next >= len(self._rows):
            raise StopIteration
        self._next += 1
        return self._rows[self._next - 1]

    def fetchone(self) -> tuple[Any, ...] | None:
        return next(self, None)

    def fetchall(self) -> list[tuple[Any, ...]]:
        rest = self._rows[self._next :]
        self._next = len(self._rows)
        return rest

    def getdescription(self) -> list[tuple[str, str]]:
        return [(n, "") for n in self._names]


class PgDatabase(Reads):
    """One namespace of a PostgreSQL database, with the surface the table owners use."""

    dialect: Literal["postgresql"] = "postgresql"
    vec_enabled = True

    def __init__(self, url: str, namespace: Namespace, *, pool_size: int = 4, timeout: float = 10):
        self.url = url
        self.namespace = namespace
        self.path = f"{shown_url(url)} (namespace {namespace.schema})"
        self._timeout = timeout
        self._local = threading.local()
        #: Statements sent through `execute` / `executemany`: how many round trips a search
        #: takes (issue 34 holds a PostgreSQL search to a few; the benchmarks report it).
        self.statements = 0
        self._bootstrap()
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            timeout=timeout,
            open=False,
            name=f"tideline:{namespace.schema}",
        )
        try:
            self.pool.open(wait=True, timeout=timeout)
        except PoolTimeout as exc:
            self.pool.close()
            raise self._unavailable(exc) from exc

    def _unavailable(self, exc: Exception) -> StoreError:
        return connect_error(self.url, exc)

    def _bootstrap(self) -> None:
        """The pgvector extension (shared) and this namespace's schema, before any pooled
        connection needs the `vector` type."""
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
                try:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    conn.execute(
                        pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                            pgsql.Identifier(self.namespace.schema)
                        )
                    )
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
        except (psycopg.OperationalError, psycopg.ProgrammingError) as exc:  # a URL that is not one
            raise self._unavailable(exc) from exc

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(
            pgsql.SQL("SET search_path TO {}, public").format(
                pgsql.Identifier(self.namespace.schema)
            )
        )
        register_vector(conn)

    # -- queries -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        try:
            with self.pool.connection() as conn:
                try:
                    yield conn
                except psycopg.OperationalError as exc:
                    if conn.broken or conn.closed:  # the server went away under the request
                        raise self._lost(exc) from exc
                    raise
        except PoolTimeout as exc:
            raise DatabaseLocked(
                f"no free connection to {self.path} within {self._timeout:g} s; retry"
            ) from exc

    def _lost(self, exc: Exception) -> StoreError:
        """A connection lost mid-request (the server restarted, stopped or ended the session):
        one line, a 503; the pool drops the connection and opens another for the next one."""
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return StoreError(
            f"lost the connection to PostgreSQL {self.path} ({first}); "
            "retry once the server is back"
        )

    def execute(self, sql: str, params: Params = ()) -> _Rows:
        """Run one statement; its rows (if any) are read whole."""
        self.statements += 1
        with self._connection() as conn:
            cur = conn.execute(to_postgres(sql), params)
            if cur.description is None:
                return _Rows([], [])
            return _Rows(cur.fetchall(), [d.name for d in cur.description])

    def executemany(self, sql: str, seq: Sequence[Params]) -> None:
        if not seq:
            return
        self.statements += 1
        with self._connection() as conn, conn.cursor() as cur:
            cur.executemany(to_postgres(sql), seq)

    def rows(self, sql: str, params: Params = ()) -> list[dict[str, Any]]:
        """All rows as dicts keyed by column name."""
        cur = self.execute(sql, params)
        names = [d[0] for d in cur.getdescription()]
        return [dict(zip(names, row, strict=True)) for row in cur]

    def table_exists(self, name: str) -> bool:
        return bool(
            self.scalar(
                "SELECT 1 FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_name = ?",
                (name,),
            )
        )

    # -- transactions ------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[PgDatabase]:
        """All-or-nothing block on one connection; nested: a savepoint."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            with held.transaction():
                yield self
            return
        with self._connection() as conn:
            self._local.conn = conn
            try:
                with conn.transaction():
                    yield self
            finally:
                self._local.conn = None

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A consistent read: one REPEATABLE READ snapshot for every query inside."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        with self._connection() as conn:
            self._local.conn = conn
            try:
                with conn.transaction():
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    yield
            finally:
                self._local.conn = None

    def lock(self, key: str) -> None:
        """Serialise the writers of `key` until this transaction ends (call inside one)."""
        self.scalar("SELECT pg_advisory_xact_lock(?)", (_lock_key(key),))

    @contextlib.contextmanager
    def exclusive(self, name: str) -> Iterator[str | None]:
        """Try to hold the namespace's lock `name` for the block (one sleep at a time, across
        processes). Yields None when the block holds it, else who does ("pid N on HOST"). A
        session lock on a connection of its own: the server drops it when the process dies, as
        the kernel drops SQLite's `flock`."""
        key = _lock_key(f"{self.namespace.schema}\0{name}")
        me = f"pid {os.getpid()} on {socket.gethostname()}"
        try:
            conn = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=int(self._timeout),
                application_name=f"tideline {name}: {me}"[:63],
            )
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from exc
        with conn:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            if row and row[0]:
                try:
                    yield None
                finally:  # released now: the server drops a closed connection's locks only
                    with contextlib.suppress(psycopg.Error):  # when its backend has exited
                        conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                return
            unsigned = key & 0xFFFFFFFFFFFFFFFF  # pg_locks shows the key as two 32-bit oids
            holder = conn.execute(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
                " AND l.classid = %s AND l.objid = %s",
                (unsigned >> 32, unsigned & 0xFFFFFFFF),
            ).fetchone()
            yield str(holder[0]).partition(": ")[2] if holder else "another process"

    def advance_ids(self, table: str) -> None:
        """Number `table`'s next new row past its highest id, after rows were written with ids
        of their own (a copy): the identity column's sequence does not see those."""
        self.scalar(
            f"SELECT setval(pg_get_serial_sequence('\"{table}\"', 'id'),"
            f' (SELECT coalesce(max(id), 0) + 1 FROM "{table}"), false)'
        )

    @contextlib.contextmanager
    def migrating(self) -> Iterator[None]:
        """Hold the database-wide migration lock (one process migrates at a time)."""
        with self._connection() as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None
                conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> PgDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
