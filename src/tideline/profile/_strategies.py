"""Owner of `strategies`: questions the agent may ask naturally (clarify, probe, verify).

A strategy moves open → asked → resolved (`_lifecycle.STRATEGY_NEXT`); rows are never removed.
Two clocks (migration 3): `valid_from` is when the question arose in the user's life (its fact's
start, or its expiry for a verify question) and `valid_to` when it was settled; `created_at` and
`updated_at` are record time.
"""

from __future__ import annotations

from tideline.errors import NotFound
from tideline.profile._types import STRATEGY_KINDS, STRATEGY_STATUSES, Strategy
from tideline.store import Storage

_COLUMNS = "id, kind, fact_id, question, status, created_at, updated_at, valid_from, valid_to"


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

    @staticmethod
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: when each question arose and was settled, in valid time."""
        db.execute("ALTER TABLE strategies ADD COLUMN valid_from TEXT")
        db.execute("ALTER TABLE strategies ADD COLUMN valid_to TEXT")

    def backfill_two_clocks(self, facts: dict[int, tuple[str, str | None]]) -> None:
        """Migration 3: a question arose when its fact began (a verify question: when the fact
        ended); one without a fact, when it was recorded. Settled ones: when recorded settled."""
        out = []
        for x in self.list():
            start, end = facts.get(x.fact_id or 0, (x.created_at, None))
            begun = (end or start) if x.kind == "verify" else start
            out.append((begun, x.updated_at if x.status == "resolved" else None, x.id))
        self.db.executemany("UPDATE strategies SET valid_from = ?, valid_to = ? WHERE id = ?", out)

    def add(
        self, kind: str, fact_id: int | None, question: str, *, valid_from: str, now: str,
        run_id: int | None,
    ) -> int:  # fmt: skip
        return int(
            self.db.scalar(
                "INSERT INTO strategies(kind, fact_id, question, run_id, created_at, updated_at,"
                " valid_from) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (kind, fact_id, question, run_id, now, now, valid_from),
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

    def set_status(self, strategy_id: int, status: str, now: str, at: str | None = None) -> None:
        """A new status, recorded `now`; a resolved question was settled at `at` (valid time)."""
        self.db.execute(
            "UPDATE strategies SET status = ?, updated_at = ?,"
            " valid_to = CASE WHEN CAST(? AS TEXT) = 'resolved' THEN CAST(? AS TEXT)"
            " ELSE valid_to END"
            " WHERE id = ?",
            (status, now, status, at or now, strategy_id),
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
