"""Owner of `strategies`: questions the agent may ask naturally (clarify, probe, verify).

A strategy moves open → asked → resolved (`_lifecycle.STRATEGY_NEXT`); rows are never removed,
except the verify question an expiry raised, when late evidence withdraws the expiry
(`withdraw_expiry`, which also reopens the questions the expiry made obsolete); a lapse is
withdrawn the same way (`reopen`) when words said before it arrive late.
A resolved strategy says how it ended (`outcome`): `answered` (a later conversation answered
it), `obsolete` (its fact was rejected or closed first) or `expired` (nobody answered it in
time), with `resolved_why` and `resolved_at`.
Two clocks (migration 3): `valid_from` is when the question arose in the user's life (its fact's
start, or its expiry for a verify question) and `valid_to` when it was settled; `created_at` and
`updated_at` are record time.
"""

from __future__ import annotations

import builtins  # `list` below is a method of the store: signatures after it say `builtins.list`

from tideline.errors import IllegalTransition, NotFound
from tideline.profile._edges import HELD
from tideline.profile._records import STRATEGY_KINDS, STRATEGY_OUTCOMES, STRATEGY_STATUSES, Strategy
from tideline.store import Storage

_COLUMNS = (
    "id, kind, fact_id, question, status, created_at, updated_at, outcome, resolved_why,"
    " resolved_at, run_id, dream_run_id, valid_from, valid_to"
)


def retired_why(fact_id: int, status: str, why: str | None) -> str:
    """Why a strategy about a retired fact no longer stands: `fact #12 rejected: wrong city`."""
    return f"fact #{fact_id} {status}" + (f": {why}" if why else "")


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
        for x in self.db.rows(  # the columns as they are at migration 3
            "SELECT id, kind, fact_id, status, created_at, updated_at FROM strategies"
        ):
            start, end = facts.get(x["fact_id"] or 0, (x["created_at"], None))
            begun = (end or start) if x["kind"] == "verify" else start
            settled = x["updated_at"] if x["status"] == "resolved" else None
            out.append((begun, settled, x["id"]))
        self.db.executemany("UPDATE strategies SET valid_from = ?, valid_to = ? WHERE id = ?", out)

    @staticmethod
    def add_outcomes(db: Storage) -> None:
        """Migration: how each resolved strategy ended."""
        db.execute(
            f"ALTER TABLE strategies ADD COLUMN outcome TEXT CHECK (outcome IN {STRATEGY_OUTCOMES!r})"
        )
        db.execute("ALTER TABLE strategies ADD COLUMN resolved_why TEXT")
        db.execute("ALTER TABLE strategies ADD COLUMN resolved_at TEXT")

    @staticmethod
    def add_dream_run(db: Storage) -> None:
        """Migration: the dream run that made a strategy (combing's probes), beside `run_id`
        (the Sleep run's)."""
        db.execute("ALTER TABLE strategies ADD COLUMN dream_run_id INTEGER")

    @staticmethod
    def waiting_facts(db: Storage) -> list[int]:
        """The facts open or asked strategies are about (for migrations: no later column)."""
        rows = db.execute(
            "SELECT DISTINCT fact_id FROM strategies WHERE status != 'resolved'"
            " AND fact_id IS NOT NULL ORDER BY fact_id"
        )
        return [int(r[0]) for r in rows]

    def add(
        self,
        kind: str,
        fact_id: int | None,
        question: str,
        *,
        valid_from: str,
        now: str,
        run_id: int | None,
        dream_run_id: int | None = None,
    ) -> int:
        return int(
            self.db.scalar(
                "INSERT INTO strategies(kind, fact_id, question, run_id, dream_run_id, created_at,"
                " updated_at, valid_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (kind, fact_id, question, run_id, dream_run_id, now, now, valid_from),
            )
        )

    def restore(self, x: Strategy) -> bool:
        """A strategy from a Tideline export as it was (its fact already this home's); False
        when one with the same question and record time is already here."""
        cur = self.db.execute(
            """INSERT INTO strategies(kind, fact_id, question, status, created_at, updated_at,
                outcome, resolved_why, resolved_at, valid_from, valid_to)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM strategies
                WHERE question = ? AND created_at = ?) RETURNING id""",
            (
                x.kind, x.fact_id, x.question, x.status, x.created_at, x.updated_at, x.outcome,
                x.resolved_why, x.resolved_at, x.valid_from, x.valid_to, x.question, x.created_at,
            ),
        )  # fmt: skip
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def require(self, strategy_id: int) -> Strategy:
        row = self.db.one(f"SELECT {_COLUMNS} FROM strategies WHERE id = ?", (strategy_id,))
        if row is None:
            raise NotFound(f"strategy #{strategy_id} does not exist; list open strategies first")
        return Strategy(**row)

    def list(
        self, *, status: str | None = None, fact_id: int | None = None, held_at: str | None = None
    ) -> list[Strategy]:
        """`held_at`: the questions whose valid time held then."""
        where: list[str] = ["1 = 1"]
        params: list[object] = []
        if held_at is not None:
            where.append(HELD)
            params += [held_at, held_at]
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

    def set_status(
        self,
        strategy_id: int,
        status: str,
        now: str,
        *,
        outcome: str | None = None,
        why: str | None = None,
        at: str | None = None,
    ) -> None:
        """Move a strategy, recorded `now`; resolving it records how it ended and when it was
        settled in the user's life (`at`, valid time; default: now)."""
        resolved = status == "resolved"
        self.db.execute(
            "UPDATE strategies SET status = ?, updated_at = ?, outcome = ?, resolved_why = ?,"
            " resolved_at = ?, valid_to = ? WHERE id = ?",
            (
                status,
                now,
                outcome if resolved else None,
                why if resolved else None,
                now if resolved else None,
                (at or now) if resolved else None,
                strategy_id,
            ),
        )

    def obsolete_for(
        self, fact_ids: builtins.list[int], why: str, now: str, at: str | None = None
    ) -> int:
        """Every open or asked clarify or probe about these facts ends `obsolete` (recorded
        `now`; settled at `at`, valid time: when the fact ended); how many did. A verify
        strategy asks about a fact that expired — closed by design — so it stands until it is
        answered or expires itself."""
        if not fact_ids:
            return 0
        marks = ",".join("?" * len(fact_ids))
        cur = self.db.execute(
            "UPDATE strategies SET status = 'resolved', outcome = 'obsolete', resolved_why = ?,"
            " resolved_at = ?, updated_at = ?, valid_to = ? WHERE status IN ('open', 'asked')"
            " AND kind != 'verify'"
            f" AND fact_id IN ({marks}) RETURNING id",
            (why, now, now, at or now, *fact_ids),
        )
        return len(cur.fetchall())  # drain: RETURNING blocks COMMIT

    def withdraw_expiry(self, fact_id: int, ended: str, now: str) -> None:
        """A fact's expiry at `ended` is withdrawn: the verify question it raised goes (unless
        answered), the clarify and probe questions it made obsolete stand open again."""
        self.db.execute(
            "DELETE FROM strategies WHERE fact_id = ? AND kind = 'verify' AND valid_from = ?"
            " AND COALESCE(outcome, '') != 'answered'",
            (fact_id, ended),
        )
        self.db.execute(
            "UPDATE strategies SET status = 'open', outcome = NULL, resolved_why = NULL,"
            " resolved_at = NULL, valid_to = NULL, updated_at = ? WHERE fact_id = ?"
            " AND kind != 'verify' AND outcome = 'obsolete' AND valid_to = ?",
            (now, fact_id, ended),
        )

    def reopen(self, strategy: Strategy, now: str) -> None:
        """Withdraw a lapse: a strategy settled `expired` stands open again."""
        if strategy.outcome != "expired":
            raise IllegalTransition(
                f"strategy #{strategy.id} ended {strategy.outcome or strategy.status}, not by "
                "lapsing; only a lapse is withdrawn by late words"
            )
        self.db.execute(
            "UPDATE strategies SET status = 'open', outcome = NULL, resolved_why = NULL,"
            " resolved_at = NULL, valid_to = NULL, updated_at = ? WHERE id = ?",
            (now, strategy.id),
        )

    def settled_after(self, at: str) -> builtins.list[Strategy]:
        """The strategies a rule settled (lapsed, or made obsolete) after `at`, valid time."""
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM strategies WHERE status = 'resolved'"
            " AND outcome IN ('expired', 'obsolete') AND valid_to > ? ORDER BY id",
            (at,),
        )
        return [Strategy(**r) for r in rows]

    def ask(self, strategy_ids: builtins.list[int], now: str) -> builtins.list[int]:
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
