"""Owner of `edges`: the typed knowledge graph between facts.

Removing an edge stamps `removed_at`; the row stays, so the graph's history can be replayed.
At most one live edge of a kind joins two facts (a partial unique index on live rows).
"""

from __future__ import annotations

from tideline.profile._types import EDGE_KINDS, Edge
from tideline.store import Storage

_COLUMNS = "id, kind, from_fact, to_fact, created_at, removed_at"


class EdgeStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            f"""CREATE TABLE edges(
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN {EDGE_KINDS!r}),
                from_fact INTEGER NOT NULL REFERENCES facts(id),
                to_fact INTEGER NOT NULL REFERENCES facts(id),
                run_id INTEGER,
                created_at TEXT NOT NULL,
                removed_at TEXT,
                CHECK (from_fact <> to_fact))"""
        )
        db.execute(
            "CREATE UNIQUE INDEX edges_live ON edges(kind, from_fact, to_fact)"
            " WHERE removed_at IS NULL"
        )
        db.execute("CREATE INDEX edges_to ON edges(to_fact)")

    def add(self, kind: str, from_fact: int, to_fact: int, *, now: str, run_id: int | None) -> bool:
        """A live edge; False when the same live edge already exists."""
        cur = self.db.execute(
            "INSERT INTO edges(kind, from_fact, to_fact, run_id, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
            (kind, from_fact, to_fact, run_id, now),
        )
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def remove_for(self, fact_id: int, at: str) -> int:
        """Retire every live edge touching a fact (when it is closed or rejected)."""
        cur = self.db.execute(
            "UPDATE edges SET removed_at = ? WHERE removed_at IS NULL"
            " AND (from_fact = ? OR to_fact = ?) RETURNING id",
            (at, fact_id, fact_id),
        )
        return len(cur.fetchall())

    def list(self, *, fact_id: int | None = None, live: bool = True) -> list[Edge]:
        where, params = ["1 = 1"], []
        if live:
            where.append("removed_at IS NULL")
        if fact_id is not None:
            where.append("(from_fact = ? OR to_fact = ?)")
            params += [fact_id, fact_id]
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM edges WHERE {' AND '.join(where)} ORDER BY id", params
        )
        return [Edge(**r) for r in rows]

    def count(self) -> dict[str, int]:
        return {"edges": int(self.db.scalar("SELECT COUNT(*) FROM edges"))}
