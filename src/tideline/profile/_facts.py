"""Owner of `facts`, `fact_changes` and `fact_evidence`: all their SQL lives here.

Invariants:
- No row is ever deleted or has its subject/category/value edited. A fact changes only by status
  (with `valid_to` set when it becomes rejected or closed), by counters (mentions, confidence,
  decay) and by gaining evidence.
- Every status change, creation included, is a `fact_changes` row: the fact's timeline.
- `fact_evidence` points at a turn (the raw context) and/or an observation, with a polarity.
  The same link is stored once (a unique index over the coalesced ids).
- Callers enforce the lifecycle (`_lifecycle`) before calling; this module only stores.
"""

from __future__ import annotations

from collections.abc import Sequence

from tideline.errors import NotFound
from tideline.profile._drafts import FactDraft
from tideline.profile._types import (
    ACTIVE_STATUSES,
    FINAL_STATUSES,
    POLARITIES,
    SOURCE_TYPES,
    STATUSES,
    Evidence,
    Fact,
    StatusChange,
)
from tideline.store import Storage, storable

_COLUMNS = (
    "f.id, f.subject, f.category, f.value, f.status, f.confidence, f.source_type, "
    "f.mention_count, f.decay_days, f.expires_at, f.valid_from, f.valid_to, f.supersedes, "
    "f.merged_into, f.last_seen_at, f.rejected_why, f.created_at, f.updated_at, "
    "(SELECT COUNT(*) FROM fact_evidence e WHERE e.fact_id = f.id AND e.polarity = 'support')"
    " AS evidence_count, f.prior"
)


def _marks(n: int) -> str:
    return ",".join("?" * n)


class FactStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def status_filter(statuses: Sequence[str]) -> tuple[str, list[object]]:
        """A search filter (on an index keyed by fact id) for facts in these statuses."""
        marks = ",".join("?" * len(statuses))
        return f"rowid IN (SELECT id FROM facts WHERE status IN ({marks}))", list(statuses)

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            f"""CREATE TABLE facts(
                id INTEGER PRIMARY KEY,
                subject TEXT NOT NULL,
                category TEXT NOT NULL,
                value TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN {STATUSES!r}),
                confidence REAL NOT NULL CHECK (confidence BETWEEN 0 AND 1),
                source_type TEXT NOT NULL CHECK (source_type IN {SOURCE_TYPES!r}),
                mention_count INTEGER NOT NULL DEFAULT 1 CHECK (mention_count >= 1),
                decay_days INTEGER CHECK (decay_days >= 1),
                expires_at TEXT,
                valid_from TEXT NOT NULL,
                valid_to TEXT,
                supersedes INTEGER REFERENCES facts(id),
                merged_into INTEGER REFERENCES facts(id),
                last_seen_at TEXT NOT NULL,
                rejected_why TEXT,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL)"""
        )
        db.execute("CREATE INDEX facts_status ON facts(status)")
        db.execute("CREATE INDEX facts_subject ON facts(subject, category)")
        db.execute("CREATE INDEX facts_supersedes ON facts(supersedes)")
        db.execute(
            f"""CREATE TABLE fact_changes(
                id INTEGER PRIMARY KEY,
                fact_id INTEGER NOT NULL REFERENCES facts(id),
                from_status TEXT,
                to_status TEXT NOT NULL CHECK (to_status IN {STATUSES!r}),
                at TEXT NOT NULL,
                why TEXT,
                run_id INTEGER)"""
        )
        db.execute("CREATE INDEX fact_changes_fact ON fact_changes(fact_id)")
        db.execute(
            f"""CREATE TABLE fact_evidence(
                id INTEGER PRIMARY KEY,
                fact_id INTEGER NOT NULL REFERENCES facts(id),
                turn_id INTEGER,
                observation_id INTEGER REFERENCES observations(id),
                polarity TEXT NOT NULL CHECK (polarity IN {POLARITIES!r}),
                created_at TEXT NOT NULL,
                CHECK (turn_id IS NOT NULL OR observation_id IS NOT NULL))"""
        )
        db.execute(
            "CREATE UNIQUE INDEX fact_evidence_once ON fact_evidence"
            "(fact_id, polarity, COALESCE(turn_id, 0), COALESCE(observation_id, 0))"
        )

    @staticmethod
    def retired(db: Storage, fact_ids: Sequence[int]) -> list[tuple[int, str, str | None, str]]:
        """For migrations (the first schema's columns only): the retired ones among these
        facts, as (id, status, reason, when)."""
        out = []
        for start in range(0, len(fact_ids), 500):
            part = list(fact_ids[start : start + 500])
            rows = db.execute(
                "SELECT id, status, rejected_why, COALESCE(valid_to, updated_at) FROM facts"
                f" WHERE id IN ({_marks(len(part))}) AND status IN ({_marks(len(FINAL_STATUSES))})"
                " ORDER BY id",
                (*part, *FINAL_STATUSES),
            )
            out += [(int(i), str(st), why, str(at)) for i, st, why, at in rows]
        return out

    @staticmethod
    def add_prior(db: Storage) -> None:
        """Migration: the confidence a fact was created with, from which evidence moves it."""
        db.execute("ALTER TABLE facts ADD COLUMN prior REAL CHECK (prior BETWEEN 0 AND 1)")
        db.execute("UPDATE facts SET prior = confidence")

    # -- reads -------------------------------------------------------------------------------
    def get(self, fact_id: int) -> Fact | None:
        if not storable(fact_id):
            return None
        row = self.db.one(f"SELECT {_COLUMNS} FROM facts f WHERE f.id = ?", (fact_id,))
        return None if row is None else Fact(**row)

    def require(self, fact_id: int) -> Fact:
        fact = self.get(fact_id)
        if fact is None:
            raise NotFound(f"fact #{fact_id} does not exist; list facts with `tideline profile`")
        return fact

    def list(
        self,
        statuses: Sequence[str] | None = None,
        category: str | None = None,
        subject: str | None = None,
    ) -> list[Fact]:
        where, params = ["1 = 1"], []
        if statuses:
            where.append(f"f.status IN ({_marks(len(statuses))})")
            params += list(statuses)
        if category is not None:
            where.append("f.category = ?")
            params.append(category)
        if subject is not None:
            where.append("f.subject = ?")
            params.append(subject)
        sql = f"SELECT {_COLUMNS} FROM facts f WHERE {' AND '.join(where)} ORDER BY f.id"
        return [Fact(**r) for r in self.db.rows(sql, params)]

    def challengers(self) -> dict[int, list[int]]:
        """Each live fact that live facts supersede → those facts (a disputed pair's old side)."""
        marks = _marks(len(ACTIVE_STATUSES))
        rows = self.db.execute(
            f"SELECT n.supersedes, n.id FROM facts n JOIN facts o ON o.id = n.supersedes"
            f" WHERE n.status IN ({marks}) AND o.status IN ({marks}) ORDER BY n.id",
            (*ACTIVE_STATUSES, *ACTIVE_STATUSES),
        )
        out: dict[int, list[int]] = {}
        for old, new in rows:
            out.setdefault(int(old), []).append(int(new))
        return out

    def superseded_by(self, fact_id: int) -> list[int]:
        rows = self.db.execute("SELECT id FROM facts WHERE supersedes = ? ORDER BY id", (fact_id,))
        return [r[0] for r in rows]

    def evidence(self, fact_ids: Sequence[int]) -> dict[int, list[Evidence]]:
        out: dict[int, list[Evidence]] = {i: [] for i in fact_ids}
        if not fact_ids:
            return out
        rows = self.db.rows(
            "SELECT fact_id, turn_id, observation_id, polarity, created_at FROM fact_evidence"
            f" WHERE fact_id IN ({_marks(len(fact_ids))}) ORDER BY id",
            list(fact_ids),
        )
        for r in rows:
            out[r["fact_id"]].append(Evidence(**r))
        return out

    def changes(self, fact_ids: Sequence[int]) -> list[StatusChange]:
        if not fact_ids:
            return []
        rows = self.db.rows(
            "SELECT fact_id, from_status, to_status, at, why, run_id FROM fact_changes"
            f" WHERE fact_id IN ({_marks(len(fact_ids))}) ORDER BY at, id",
            list(fact_ids),
        )
        return [StatusChange(**r) for r in rows]

    def count(self) -> dict[str, int]:
        return {
            t: int(self.db.scalar(f"SELECT COUNT(*) FROM {t}"))
            for t in ("facts", "fact_changes", "fact_evidence")
        }

    # -- writes ------------------------------------------------------------------------------
    def insert(
        self,
        draft: FactDraft,
        *,
        now: str,
        expires_at: str | None,
        supersedes: int | None = None,
        run_id: int | None = None,
    ) -> int:
        valid_from = draft.valid_from or now
        fid = int(
            self.db.scalar(
                """INSERT INTO facts(subject, category, value, status, confidence, prior,
                    source_type, mention_count, decay_days, expires_at, valid_from, supersedes,
                    last_seen_at, created_at, updated_at)
                VALUES (?, ?, ?, 'suspected', ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
                (
                    draft.subject,
                    draft.category,
                    draft.value,
                    float(draft.confidence),
                    float(draft.confidence),
                    draft.source_type,
                    draft.decay_days,
                    expires_at,
                    valid_from,
                    supersedes,
                    now,
                    now,
                    now,
                ),
            )
        )
        self._log(fid, None, "suspected", now, None, run_id)
        return fid

    def add_evidence(
        self,
        fact_id: int,
        *,
        turn_id: int | None,
        observation_id: int | None,
        polarity: str,
        now: str,
    ) -> bool:
        """Link evidence once; False when this exact link already existed."""
        cur = self.db.execute(
            """INSERT INTO fact_evidence(fact_id, turn_id, observation_id, polarity, created_at)
            VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id""",
            (fact_id, turn_id, observation_id, polarity, now),
        )
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def mention(
        self, fact_id: int, *, seen_at: str, expires_at: str | None, now: str, count: int = 1
    ) -> None:
        """More mentions: the count grows and the fact's life restarts from `seen_at`."""
        self.db.execute(
            "UPDATE facts SET mention_count = mention_count + ?, last_seen_at = ?, expires_at = ?,"
            " updated_at = ? WHERE id = ?",
            (count, seen_at, expires_at, now, fact_id),
        )

    def set_status(
        self,
        fact: Fact,
        to: str,
        *,
        now: str,
        at: str,
        why: str | None,
        run_id: int | None,
        merged_into: int | None = None,
    ) -> None:
        """Move a fact; final statuses record their end time `at` and the reason."""
        final = to in FINAL_STATUSES
        self.db.execute(
            """UPDATE facts SET status = ?, valid_to = ?, rejected_why = ?,
                merged_into = COALESCE(?, merged_into), updated_at = ? WHERE id = ?""",
            (
                to,
                at if final else fact.valid_to,
                why if to == "rejected" else fact.rejected_why,
                merged_into,
                now,
                fact.id,
            ),
        )
        self._log(fact.id, fact.status, to, at, why, run_id)

    def set_decay(self, fact_id: int, decay_days: int, expires_at: str | None, now: str) -> None:
        self.db.execute(
            "UPDATE facts SET decay_days = ?, expires_at = ?, updated_at = ? WHERE id = ?",
            (decay_days, expires_at, now, fact_id),
        )

    def set_confidence(self, fact_id: int, confidence: float, now: str) -> None:
        self.db.execute(
            "UPDATE facts SET confidence = ?, updated_at = ? WHERE id = ?",
            (confidence, now, fact_id),
        )

    def _log(
        self,
        fact_id: int,
        from_status: str | None,
        to: str,
        at: str,
        why: str | None,
        run_id: int | None,
    ) -> None:
        self.db.execute(
            "INSERT INTO fact_changes(fact_id, from_status, to_status, at, why, run_id)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (fact_id, from_status, to, at, why, run_id),
        )
