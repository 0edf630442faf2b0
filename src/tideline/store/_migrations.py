"""Numbered, recorded schema migrations.

A `Migrations` set is a name plus numbered step functions. Opening a database applies the pending
steps in order, each in its own transaction, and records it in `_migrations`. A database that has
a step this code does not know was written by a newer Tideline: we refuse to touch it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from tideline.errors import SchemaTooNew
from tideline.store._database import Database

Step = Callable[[Database], None]


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

    def applied(self, db: Database) -> list[int]:
        """Numbers already recorded in this database (read-only)."""
        if not db.table_exists("_migrations"):
            return []
        rows = db.execute(
            "SELECT number FROM _migrations WHERE name = ? ORDER BY number", (self.name,)
        )
        return [r[0] for r in rows]

    def pending(self, db: Database) -> list[int]:
        """Numbers still to apply (read-only)."""
        done = set(self.applied(db))
        return sorted(n for n in self._steps if n not in done)

    def apply(self, db: Database) -> list[int]:
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
                    (self.name, number, dt.datetime.now(dt.UTC).isoformat(timespec="seconds")),
                )
            applied.append(number)
        return applied


def open_database(
    path: str | object,
    *migrations: Migrations,
    busy_timeout_ms: int = 5000,
) -> Database:
    """Open (creating if needed) a database and bring its schema up to date: each set of
    migrations in the order given (a later set may build on an earlier one's tables)."""
    db = Database(str(path), busy_timeout_ms=busy_timeout_ms)
    try:
        for m in migrations:
            m.apply(db)
    except BaseException:
        db.close()
        raise
    return db
