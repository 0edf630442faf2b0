"""Owner of `strategies`: questions the agent may ask naturally (clarify, probe, verify).

A strategy moves open → asked → resolved (`_lifecycle.STRATEGY_NEXT`); rows are never removed.
"""

from __future__ import annotations

from tideline.errors import NotFound
from tideline.profile._types import STRATEGY_KINDS, STRATEGY_STATUSES, Strategy
from tideline.store import Storage

_COLUMNS = "id, kind, fact_id, question, status, created_at, updated_at"


class StrategyStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            f"""CREATE TABLE strategies(
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN {STRATEGY_KINDS!r}),
                fact_id INTEGER REFERENCES facts(id),
                question TEXT NOT NULL,
                status TEXT NOT NULL DEFAULT 'open' CHECK (status IN {STRATEGY_STATUSES!r}),
                run_id INTEGER,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL)"""
        )
        db.execute("CREATE INDEX strategies_status ON strategies(status, fact_id)")

    def add(
        self, kind: str, fact_id: int | None, question: str, *, now: str, run_id: int | None
    ) -> int:
        return int(
            self.db.scalar(
                "INSERT INTO strategies(kind, fact_id, question, run_id, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (kind, fact_id, question, run_id, now, now),
            )
        )

    def require(self, strategy_id: int) -> Strategy:
        row = self.db.one(f"SELECT {_COLUMNS} FROM strategies WHERE id = ?", (strategy_id,))
        if row is None:
            raise NotFound(f"strategy #{strategy_id} does not exist; list open strategies first")
        return Strategy(**row)

    def list(self, *, status: str | None = None, fact_id: int | None = None) -> list[Strategy]:
        where, params = ["1 = 1"], []
        if status is not None:
            where.append("status = ?")
            params.append(status)
        if fact_id is not None:
            where.append("fact_id = ?")
            params.append(fact_id)
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM strategies WHERE {' AND '.join(where)} ORDER BY id", params
        )
        return [Strategy(**r) for r in rows]

    def set_status(self, strategy_id: int, status: str, now: str) -> None:
        self.db.execute(
            "UPDATE strategies SET status = ?, updated_at = ? WHERE id = ?",
            (status, now, strategy_id),
        )

    def ask(self, strategy_ids: list[int], now: str) -> list[int]:
        """Open strategies among `strategy_ids` become asked; the ids that were still open."""
        if not strategy_ids:
            return []
        marks = ",".join("?" * len(strategy_ids))
        cur = self.db.execute(
            f"UPDATE strategies SET status = 'asked', updated_at = ?"
            f" WHERE status = 'open' AND id IN ({marks}) RETURNING id",
            (now, *strategy_ids),
        )
        return sorted(int(r[0]) for r in cur.fetchall())  # drain: RETURNING blocks COMMIT

    def count(self) -> dict[str, int]:
        return {"strategies": int(self.db.scalar("SELECT COUNT(*) FROM strategies"))}
