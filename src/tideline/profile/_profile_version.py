"""Owner of `profile_version`: one counter, bumped by every write to the profile.

It is the optimistic lock of the Sleep pipeline: a changeset remembers the version it was computed
from, and applying it checks and bumps the counter in the same transaction. A changed counter means
the data changed under the changeset, which is then refused whole.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from tideline.store import Storage


class VersionStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
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

    def reading(self) -> AbstractContextManager[None]:
        """A consistent read: every query inside sees one snapshot, without the write lock
        (the engine's own: `Storage.reading`)."""
        return self.db.reading()
