"""Owner of `relationships`: the people the user mentions, one row per person.

A person is found by `name_key` (see `_mentions.person_key`); each mention updates the row in
place (count, details, relation) and a status change is appended to the JSON `history`, so the
row never loses what it was. Two clocks: `first_seen_at`, `last_seen_at` and a history entry's
`at` are valid time (when the person was mentioned); `created_at`, `updated_at` and an entry's
`recorded_at` are record time (migration 3).
"""

from __future__ import annotations

import json

from tideline.profile._records import Relationship
from tideline.store import Storage


def _relationship(row: dict[str, object]) -> Relationship:
    row = dict(row)
    row.pop("name_key")
    row["history"] = json.loads(str(row["history"]))
    return Relationship(**row)  # type: ignore[arg-type]


class RelationshipStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            """CREATE TABLE relationships(
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL,
                name_key TEXT NOT NULL UNIQUE,
                relation TEXT NOT NULL DEFAULT '',
                details TEXT NOT NULL DEFAULT '',
                mention_count INTEGER NOT NULL DEFAULT 1,
                status TEXT NOT NULL DEFAULT 'active',
                history TEXT NOT NULL DEFAULT '[]',
                first_seen_at TEXT NOT NULL,
                last_seen_at TEXT NOT NULL)"""
        )

    @staticmethod
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: record time. The old seen times were processing times too: they stand."""
        db.execute("ALTER TABLE relationships ADD COLUMN created_at TEXT")
        db.execute("ALTER TABLE relationships ADD COLUMN updated_at TEXT")
        db.execute("UPDATE relationships SET created_at = first_seen_at, updated_at = last_seen_at")

    def find(self, name_key: str) -> Relationship | None:
        row = self.db.one("SELECT * FROM relationships WHERE name_key = ?", (name_key,))
        return None if row is None else _relationship(row)

    def list(self, *, seen_by: str | None = None) -> list[Relationship]:
        """The people, most mentioned first; `seen_by`: those first mentioned by then."""
        where = "" if seen_by is None else " WHERE first_seen_at <= ?"
        rows = self.db.rows(
            f"SELECT * FROM relationships{where} ORDER BY mention_count DESC, id",
            () if seen_by is None else (seen_by,),
        )
        return [_relationship(r) for r in rows]

    def save(self, rel: Relationship, name_key: str) -> int:
        """Insert a new person (id 0) or write back a merged one."""
        values = (
            rel.name,
            rel.relation,
            rel.details,
            rel.mention_count,
            rel.status,
            json.dumps(rel.history, ensure_ascii=False),
            rel.first_seen_at,
            rel.last_seen_at,
            rel.updated_at,
        )
        if rel.id == 0:
            return int(
                self.db.scalar(
                    """INSERT INTO relationships(name, relation, details, mention_count, status,
                        history, first_seen_at, last_seen_at, updated_at, name_key, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
                    (*values, name_key, rel.created_at),
                )
            )
        self.db.execute(
            """UPDATE relationships SET name = ?, relation = ?, details = ?, mention_count = ?,
                status = ?, history = ?, first_seen_at = ?, last_seen_at = ?, updated_at = ?
                WHERE id = ?""",
            (*values, rel.id),
        )
        return rel.id

    def count(self) -> dict[str, int]:
        return {"relationships": int(self.db.scalar("SELECT COUNT(*) FROM relationships"))}
