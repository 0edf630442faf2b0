"""Owner of `profile_version`: one counter, bumped by every write to the profile.

It is the optimistic lock of the Sleep pipeline: a changeset remembers the version it was computed
from, and applying it checks and bumps the counter in the same transaction. A changed counter means
the data changed under the changeset, which is then refused whole.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tideline.store import Database


class VersionStore:
    def __init__(self, db: Database):
        self.db = db

    @staticmethod
    def create_tables(db: Database) -> None:
        db.execute(
            """CREATE TABLE profile_version(
                id INTEGER PRIMARY KEY CHECK (id = 1),
                version INTEGER NOT NULL,
                updated_at TEXT)"""
        )
        db.execute("INSERT INTO profile_version(id, version) VALUES (1, 0)")

    def current(self) -> int:
        return int(self.db.scalar("SELECT version FROM profile_version WHERE id = 1"))

    def bump(self, now: str) -> int:
        """Next version; call inside the write transaction that changed the profile."""
        return int(
            self.db.scalar(
                "UPDATE profile_version SET version = version + 1, updated_at = ? WHERE id = 1"
                " RETURNING version",
                (now,),
            )
        )

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A consistent read: every query inside sees one snapshot, without the write lock.

        SQLite: a deferred transaction (in WAL mode readers never block the writer).
        """
        if self.db.conn.in_transaction:
            yield
            return
        self.db.execute("BEGIN DEFERRED")
        try:
            yield
        finally:
            self.db.execute("COMMIT")
