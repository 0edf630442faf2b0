"""Numbered, recorded schema migrations.

A `Migrations` set is a name plus numbered step functions. Opening a database applies the pending
steps in order, each in its own transaction, and records it in `_migrations`. A database that has
a step this code does not know was written by a newer Tideline: we refuse to touch it.

A new file is built under a private name and linked into place whole, so a file at the real path
is always a complete Tideline database: an empty file, or SQLite without our `_migrations`, is
damage or a mix-up, and is refused instead of being used as a new, empty memory.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tideline.clock import now_text, system_clock
from tideline.errors import NotADatabase, SchemaTooNew
from tideline.store._database import Database
from tideline.store._pg_namespace import missing_extra
from tideline.store._storage import Storage

if TYPE_CHECKING:  # psycopg is an optional dependency: imported when a URL asks for it
    from tideline.store._pg_namespace import Namespace
    from tideline.store._postgres import PgDatabase

#: A step takes the database it migrates: a `Storage` in the agent's sets, which run on both
#: engines, or a `Database` in SQLite-only sets (a library index, the embedding cache).
Step = Callable[[Any], None]


class Migrations:
    """A named, ordered set of schema steps (`@migrations.step(1)`)."""

    def __init__(self, name: str):
        self.name = name
        self._steps: dict[int, Step] = {}

    def step(self, number: int) -> Callable[[Step], Step]:
        def register(fn: Step) -> Step:
            if number in self._steps:
                raise ValueError(f"migration {self.name}#{number} is defined twice")
            self._steps[number] = fn
            return fn

        return register

    @property
    def latest(self) -> int:
        return max(self._steps, default=0)

    def applied(self, db: Storage) -> list[int]:
        """Numbers already recorded in this database (read-only)."""
        if not db.table_exists("_migrations"):
            return []
        rows = db.execute(
            "SELECT number FROM _migrations WHERE name = ? ORDER BY number", (self.name,)
        )
        return [r[0] for r in rows]

    def pending(self, db: Storage) -> list[int]:
        """Numbers still to apply (read-only)."""
        done = set(self.applied(db))
        return sorted(n for n in self._steps if n not in done)

    def apply(self, db: Storage) -> list[int]:
        """Apply pending steps in order; return the numbers applied."""
        done = self.applied(db)
        if done and max(done) > self.latest:
            raise SchemaTooNew(
                f"{db.path} has schema {self.name} v{max(done)} but this Tideline knows only "
                f"v{self.latest}; upgrade tideline (pip install -U tideline)"
            )
        applied = []
        for number in self.pending(db):
            with db.transaction():
                db.execute(
                    "CREATE TABLE IF NOT EXISTS _migrations("
                    "name TEXT NOT NULL, number INTEGER NOT NULL, applied_at TEXT NOT NULL,"
                    " PRIMARY KEY (name, number))"
                )
                if number in self.applied(db):  # another process applied it while we waited
                    continue
                self._steps[number](db)
                db.execute(
                    "INSERT INTO _migrations(name, number, applied_at) VALUES (?, ?, ?)",
                    (self.name, number, now_text(system_clock)),  # the machine's, never a replay's
                )
            applied.append(number)
        return applied


def open_database(
    path: str | os.PathLike[str],
    *migrations: Migrations,
    busy_timeout_ms: int = 5000,
    remember_damage: bool = False,
    check_every: float | None = None,
) -> Database:
    """Open (creating if needed) a database and bring its schema up to date: each set of
    migrations in the order given (a later set may build on an earlier one's tables)."""
    if migrations and str(path) != ":memory:" and not Path(path).exists():
        _create(Path(path), migrations, busy_timeout_ms)
    db = Database(
        str(path),
        busy_timeout_ms=busy_timeout_ms,
        remember_damage=remember_damage,
        check_every=check_every,
    )
    if migrations:
        with _closed_on_failure(db):
            _require_ours(db, migrations[0])
            for m in migrations:
                m.apply(db)
    return db


def open_postgres(
    url: str, namespace: Namespace, *migrations: Migrations, pool_size: int = 4
) -> PgDatabase:
    """Open one namespace of a PostgreSQL database and bring its schema up to date (the same
    migration sets as SQLite), one process at a time."""
    try:
        from tideline.store._postgres import PgDatabase
    except ImportError as exc:
        raise missing_extra(exc) from exc
    db = PgDatabase(url, namespace, pool_size=pool_size)
    with _closed_on_failure(db), db.migrating():
        for m in migrations:
            m.apply(db)
    return db


@contextlib.contextmanager
def _closed_on_failure(db: Storage) -> Iterator[None]:
    """A database whose opening failed half way (a migration, a refusal) is closed again, so
    no connection outlives the error."""
    try:
        yield
    except BaseException:
        db.close()
        raise


def _create(path: Path, migrations: Sequence[Migrations], busy_timeout_ms: int) -> None:
    """Build the schema in a private file, then link it to `path` unless another process won."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.new")
    try:
        with Database(tmp, busy_timeout_ms=busy_timeout_ms) as db:
            for m in migrations:
                m.apply(db)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # created meanwhile by another process: theirs is just as good
        except OSError:  # a filesystem without hard links
            if not path.exists():
                os.rename(tmp, path)
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{tmp}{suffix}").unlink()


def _require_ours(db: Database, migrations: Migrations) -> None:
    """Refuse SQLite written by something else rather than adding our tables next to its own."""
    if db.table_exists("_migrations") or not db.scalar("SELECT count(*) FROM sqlite_master"):
        return
    raise NotADatabase(
        f"{db.path} is an SQLite database but not Tideline's (it has no {migrations.name} "
        "schema); move it aside or use another path, and Tideline creates a new one there"
    )


def allow_values(
    db: Storage, table: str, column: str, old: Sequence[str], new: Sequence[str]
) -> None:
    """Widen a `CHECK (column IN old)` constraint to `new` (a superset), keeping every row.

    Only loosening, so no row can break it. PostgreSQL drops and re-adds the named constraint.
    SQLite cannot alter a constraint: the table's stored CREATE statement is rewritten in place
    (`writable_schema`, the way SQLite's ALTER TABLE documentation gives for changes that leave
    the stored rows as they are) and the schema version bumped, so every connection re-reads it.
    """
    if not set(old) <= set(new):
        raise ValueError(f"allow_values({table}.{column}): {list(new)} must include {list(old)}")
    values = ", ".join(f"'{v}'" for v in new)
    if db.dialect == "postgresql":
        name = f"{table}_{column}_check"
        db.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {name}")
        db.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} CHECK ({column} IN ({values}))")
        return
    before, after = f"CHECK ({column} IN {tuple(old)!r})", f"CHECK ({column} IN ({values}))"
    sql = str(
        db.scalar("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,))
    )
    if after in sql:  # made by a Tideline that knew the new values already
        return
    if before not in sql:
        raise ValueError(f"allow_values: {table} has no {before}")
    version = int(db.scalar("PRAGMA schema_version"))
    db.execute("PRAGMA writable_schema = ON")
    try:
        db.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = ?",
            (before, after, table),
        )
        db.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")
