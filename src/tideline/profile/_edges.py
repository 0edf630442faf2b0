"""Owner of `edges`: the typed knowledge graph between facts.

Removing an edge stamps `removed_at`; the row stays, so the graph's history can be replayed.
At most one live edge of a kind joins two facts (a partial unique index on live rows).
Two clocks (migration 3): `valid_from`–`valid_to` is when the link held in the user's life (from
the later of its facts' starts to the first end); `created_at`/`removed_at` is record time.
"""

from __future__ import annotations

from tideline.profile._records import EDGE_KINDS, Edge
from tideline.store import Storage

_COLUMNS = "id, kind, from_fact, to_fact, created_at, removed_at, valid_from, valid_to"
#: A span of valid time that held at a moment (`_as_of.held_at`), for its two parameters.
HELD = "valid_from IS NOT NULL AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"


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

    @staticmethod
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: when each link held, in valid time."""
        db.execute("ALTER TABLE edges ADD COLUMN valid_from TEXT")
        db.execute("ALTER TABLE edges ADD COLUMN valid_to TEXT")

    def backfill_two_clocks(self, facts: dict[int, tuple[str, str | None]]) -> None:
        """Migration 3: an edge holds from the later start of its two facts (id → (valid_from,
        valid_to)) until the earlier end, for a removed edge."""
        out = []
        for e in self.db.rows("SELECT id, from_fact, to_fact, removed_at FROM edges"):
            a, b = facts.get(e["from_fact"]), facts.get(e["to_fact"])
            if a is None or b is None:
                continue
            ends = [t for t in (a[1], b[1]) if t]
            end = min(ends) if ends and e["removed_at"] else None
            out.append((max(a[0], b[0]), end, e["id"]))
        self.db.executemany("UPDATE edges SET valid_from = ?, valid_to = ? WHERE id = ?", out)

    def add(
        self, kind: str, from_fact: int, to_fact: int, *, valid_from: str, now: str,
        run_id: int | None,
    ) -> bool:  # fmt: skip
        """A live edge holding from `valid_from`; False when the same live edge already exists."""
        cur = self.db.execute(
            "INSERT INTO edges(kind, from_fact, to_fact, run_id, created_at, valid_from)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
            (kind, from_fact, to_fact, run_id, now, valid_from),
        )
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def restore(self, edge: Edge) -> bool:
        """An edge from a Tideline export as it was (its facts' ids already this home's);
        False when the same edge (kind, ends, record time) is already here."""
        cur = self.db.execute(
            "INSERT INTO edges(kind, from_fact, to_fact, created_at, removed_at, valid_from,"
            " valid_to) SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM edges"
            " WHERE kind = ? AND from_fact = ? AND to_fact = ? AND created_at = ?)"
            " ON CONFLICT DO NOTHING RETURNING id",
            (
                edge.kind, edge.from_fact, edge.to_fact, edge.created_at, edge.removed_at,
                edge.valid_from, edge.valid_to, edge.kind, edge.from_fact, edge.to_fact,
                edge.created_at,
            ),
        )  # fmt: skip
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def remove_for(self, fact_id: int, *, at: str, now: str) -> int:
        """Retire every live edge touching a fact (when it is closed or rejected): the link
        ended at `at` (valid time), and Tideline removed it `now`."""
        cur = self.db.execute(
            "UPDATE edges SET removed_at = ?, valid_to = ? WHERE removed_at IS NULL"
            " AND (from_fact = ? OR to_fact = ?) RETURNING id",
            (now, at, fact_id, fact_id),
        )
        return len(cur.fetchall())

    def hold_again(self, edge_id: int) -> None:
        """A retired edge holds again: the expiry that retired it was withdrawn (both its facts
        believed again)."""
        self.db.execute(
            "UPDATE edges SET removed_at = NULL, valid_to = NULL WHERE id = ?"
            " AND removed_at IS NOT NULL",
            (edge_id,),
        )

    def list(
        self, *, fact_id: int | None = None, live: bool = True, held_at: str | None = None
    ) -> list[Edge]:
        """`live`: not removed; `held_at`: links whose valid time held then."""
        where: list[str] = ["1 = 1"]
        params: list[object] = []
        if live:
            where.append("removed_at IS NULL")
        if held_at is not None:
            where.append(HELD)
            params += [held_at, held_at]
        if fact_id is not None:
            where.append("(from_fact = ? OR to_fact = ?)")
            params += [fact_id, fact_id]
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM edges WHERE {' AND '.join(where)} ORDER BY id", params
        )
        return [Edge(**r) for r in rows]

    def count(self) -> dict[str, int]:
        return {"edges": int(self.db.scalar("SELECT COUNT(*) FROM edges"))}
