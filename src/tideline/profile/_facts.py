"""Owner of `facts`, `fact_changes` and `fact_evidence`: all their SQL lives here.

Invariants:
- No row is ever deleted or has its subject/category/value edited — except that an expiry, a
  rule's conclusion from missing evidence, is withdrawn when evidence said before it arrives
  late (`reopen`): its change row goes and the fact lives on as it was. A fact changes only by status
  (with `valid_to` set when it becomes rejected or closed), by counters (mentions, confidence,
  decay) and by gaining evidence.
- Every status change, creation included, is a `fact_changes` row: the fact's timeline.
- `fact_evidence` points at a turn (the raw context) and/or an observation, with a polarity.
  The same link is stored once (a unique index over the coalesced ids).
- Callers enforce the lifecycle (`_lifecycle`) before calling; this module only stores.

Two clocks (migration 3): valid time — `valid_from` (its first evidence was said), `valid_to`,
`last_seen_at` (its latest supporting evidence), `expires_at`, each change's `at` and each
evidence row's `said_at` — comes from the turns' own timestamps, worked out by the caller; record
time — `created_at`, `updated_at`, `retired_at`, a change's `recorded_at`, an evidence row's
`created_at` — is the apply time. This module invents no valid time.
"""

from __future__ import annotations

import builtins  # `list` below is a method of the store: signatures after it say `builtins.list`
from collections.abc import Sequence

from tideline.errors import IllegalTransition, InvalidInput, NotFound
from tideline.profile._decay import expires_at
from tideline.profile._drafts import FactDraft
from tideline.profile._records import (
    ACTIVE_STATUSES,
    EXPIRED,
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
    "f.merged_into, f.last_seen_at, f.rejected_why, f.created_at, f.updated_at, f.retired_at, "
    "(SELECT COUNT(*) FROM fact_evidence e WHERE e.fact_id = f.id AND e.polarity = 'support')"
    " AS evidence_count, f.prior"
)


#: an evidence row as `_backing` counts it: turn id, observation id, polarity, said at
Link = tuple[int | None, int | None, str, str | None]


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
    def ids_filter(fact_ids: Sequence[int]) -> tuple[str, list[object]]:
        """A search filter (on an index keyed by fact id) for these facts, whatever their
        status."""
        marks = ",".join("?" * len(fact_ids)) or "NULL"
        return f"rowid IN ({marks})", [int(i) for i in fact_ids]

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
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: record time of retirement, of each change, valid time of each evidence."""
        db.execute("ALTER TABLE facts ADD COLUMN retired_at TEXT")
        db.execute("ALTER TABLE fact_changes ADD COLUMN recorded_at TEXT")
        db.execute("ALTER TABLE fact_evidence ADD COLUMN said_at TEXT")

    def backfill_two_clocks(self, turn_at: dict[int, str], observation_at: dict[int, str]) -> None:
        """Migration 3: valid time from the evidence, for rows written when every time was the
        processing time. Each evidence row is said when its turn was (else its observation);
        a fact is valid from its earliest supporting evidence and last seen at its latest, its
        expiry recomputed from that; a fact closed as superseded ends when its successor began,
        one closed as expired at its (new) expiry; the old change times become record times."""
        rows = self.db.rows(
            "SELECT id, fact_id, turn_id, observation_id, polarity, created_at FROM fact_evidence"
        )
        said: dict[int, list[tuple[str, str]]] = {}
        for r in rows:
            when = turn_at.get(r["turn_id"] or 0) or observation_at.get(r["observation_id"] or 0)
            r["said_at"] = when or r["created_at"]
            if r["polarity"] == "support":
                said.setdefault(r["fact_id"], []).append((r["said_at"], r["created_at"]))
        self.db.executemany(
            "UPDATE fact_evidence SET said_at = ? WHERE id = ?",
            [(r["said_at"], r["id"]) for r in rows],
        )
        # the columns as they are at migration 3 (later migrations may add more)
        facts = {
            r["id"]: r
            for r in self.db.rows(
                "SELECT id, status, decay_days, valid_from, valid_to, supersedes, last_seen_at,"
                " updated_at FROM facts"
            )
        }
        for f in facts.values():
            times = [t for t, _ in said.get(f["id"], [])]
            if times:
                f["valid_from"] = min(f["valid_from"], min(times))
                f["last_seen_at"] = max(times)
            f["expires_at"] = (
                None if f["decay_days"] is None else expires_at(f["last_seen_at"], f["decay_days"])
            )
            f["retired_at"] = f["updated_at"] if f["status"] in FINAL_STATUSES else None
        successor = {f["supersedes"]: f for f in facts.values() if f["supersedes"] is not None}
        changes = self.db.rows(
            "SELECT id, fact_id, from_status, to_status, at, why FROM fact_changes"
        )
        closing = {c["fact_id"]: c["why"] or "" for c in changes if c["to_status"] == "closed"}
        for f in facts.values():
            why = closing.get(f["id"], "")
            if f["status"] == "closed" and why.startswith("superseded by") and f["id"] in successor:
                f["valid_to"] = max(f["valid_from"], successor[f["id"]]["valid_from"])
            elif f["status"] == "closed" and why == "expired" and f["expires_at"]:
                f["valid_to"] = f["expires_at"]
        keys = ("valid_from", "last_seen_at", "expires_at", "valid_to", "retired_at", "id")
        self.db.executemany(
            "UPDATE facts SET valid_from = ?, last_seen_at = ?, expires_at = ?, valid_to = ?,"
            " retired_at = ? WHERE id = ?",
            [tuple(f[k] for k in keys) for f in facts.values()],
        )
        out = []
        for c in changes:
            f = facts[c["fact_id"]]
            if c["from_status"] is None:
                at = f["valid_from"]
            elif c["to_status"] in FINAL_STATUSES and f["valid_to"]:
                at = f["valid_to"]
            else:  # confirmed or established by the evidence heard until then
                known = [t for t, made in said.get(f["id"], []) if made <= c["at"]]
                at = max(known) if known else f["valid_from"]
            out.append((at, c["at"], c["id"]))
        self.db.executemany("UPDATE fact_changes SET at = ?, recorded_at = ? WHERE id = ?", out)

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

    def valid_at(self, at: str) -> builtins.list[Fact]:
        """The facts that may have been believed at `at` (valid time): begun and not ended by
        then, neither rejected nor merged — what `_as_of.fact_at` then reads as of that day."""
        sql = (
            f"SELECT {_COLUMNS} FROM facts f WHERE f.status <> 'rejected'"
            " AND f.merged_into IS NULL AND f.valid_from <= ?"
            " AND (f.valid_to IS NULL OR f.valid_to > ?) ORDER BY f.id"
        )
        return [Fact(**r) for r in self.db.rows(sql, (at, at))]

    def succeed(self, fact: Fact, successor: Fact, now: str) -> None:
        """`successor` replaced `fact`: it joins its supersedes chain (once; never re-pointed)."""
        if successor.supersedes not in (None, fact.id):
            raise InvalidInput(
                f"fact #{successor.id} already supersedes #{successor.supersedes}; name a fact "
                "that replaced nothing, or close without a successor"
            )
        self.db.execute(
            "UPDATE facts SET supersedes = ?, updated_at = ? WHERE id = ?",
            (fact.id, now, successor.id),
        )

    def expired_after(self, at: str) -> builtins.list[tuple[Fact, str]]:
        """The facts closed by expiry later than `at` (valid time), each with the status it had:
        evidence said at `at` finds them still believed."""
        last = "(SELECT c.{} FROM fact_changes c WHERE c.fact_id = f.id ORDER BY c.id DESC LIMIT 1)"
        rows = self.db.rows(
            f"SELECT {_COLUMNS}, {last.format('from_status')} AS was FROM facts f"
            " WHERE f.status = 'closed' AND f.merged_into IS NULL AND f.valid_to > ?"
            f" AND f.valid_to = f.expires_at AND {last.format('why')} = ? ORDER BY f.id",
            (at, EXPIRED),
        )
        return [(Fact(**{k: v for k, v in r.items() if k != "was"}), str(r["was"])) for r in rows]

    def reopen(self, fact: Fact, now: str) -> None:
        """Withdraw a fact's expiry: its closing change row goes, it is believed as it was."""
        row = self.db.one(
            "SELECT id, from_status, why FROM fact_changes WHERE fact_id = ? ORDER BY id DESC"
            " LIMIT 1",
            (fact.id,),
        )
        if fact.status != "closed" or row is None or row["why"] != EXPIRED or fact.merged_into:
            raise IllegalTransition(
                f"fact #{fact.id} is {fact.status}, not closed by expiry; only an expiry is "
                "withdrawn by late evidence, record a new fact instead"
            )
        self.db.execute("DELETE FROM fact_changes WHERE id = ?", (row["id"],))
        self.db.execute(
            "UPDATE facts SET status = ?, valid_to = NULL, retired_at = NULL, updated_at = ?"
            " WHERE id = ?",
            (row["from_status"], now, fact.id),
        )

    def spans(self) -> dict[int, tuple[str, str | None]]:
        """Each fact's valid time (valid_from, valid_to): what its edges and strategies hold by."""
        rows = self.db.execute("SELECT id, valid_from, valid_to FROM facts")
        return {int(i): (str(a), None if b is None else str(b)) for i, a, b in rows}

    def evidence_turn_ids(self) -> set[int]:
        return {
            int(r[0])
            for r in self.db.execute(
                "SELECT DISTINCT turn_id FROM fact_evidence WHERE turn_id IS NOT NULL"
            )
        }

    def challengers(self) -> dict[int, builtins.list[int]]:
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

    def superseded_by(self, fact_id: int) -> builtins.list[int]:
        rows = self.db.execute("SELECT id FROM facts WHERE supersedes = ? ORDER BY id", (fact_id,))
        return [r[0] for r in rows]

    def evidence(
        self, fact_ids: Sequence[int], *, said_by: str | None = None
    ) -> dict[int, builtins.list[Evidence]]:
        """Each fact's evidence; `said_by`: only what was said by then (else recorded by then)."""
        out: dict[int, list[Evidence]] = {i: [] for i in fact_ids}
        if not fact_ids:
            return out
        by = "" if said_by is None else " AND COALESCE(NULLIF(said_at, ''), created_at) <= ?"
        rows = self.db.rows(
            "SELECT fact_id, turn_id, observation_id, polarity, created_at, said_at"
            " FROM fact_evidence"
            f" WHERE fact_id IN ({_marks(len(fact_ids))}){by} ORDER BY id",
            [*fact_ids, *([] if said_by is None else [said_by])],
        )
        for r in rows:
            out[r["fact_id"]].append(Evidence(**r))
        return out

    def links(self, fact_ids: Sequence[int]) -> dict[int, builtins.list[Link]]:
        """Each fact's evidence as (turn id, observation id, polarity, said at): what `_backing`
        counts, lighter than `evidence` for a whole profile."""
        out: dict[int, list[Link]] = {i: [] for i in fact_ids}
        for start in range(0, len(fact_ids), 500):
            part = list(fact_ids[start : start + 500])
            for fid, turn, obs, polarity, said_at in self.db.execute(
                "SELECT fact_id, turn_id, observation_id, polarity, said_at FROM fact_evidence"
                f" WHERE fact_id IN ({_marks(len(part))}) ORDER BY id",
                part,
            ):
                out[int(fid)].append((turn, obs, str(polarity), said_at))
        return out

    def changes(
        self, fact_ids: Sequence[int], *, by: str | None = None
    ) -> builtins.list[StatusChange]:
        """The facts' status changes in order; `by`: only those in effect by then."""
        if not fact_ids:
            return []
        until = "" if by is None else " AND at <= ?"
        rows = self.db.rows(
            "SELECT fact_id, from_status, to_status, at, why, run_id, recorded_at"
            f" FROM fact_changes WHERE fact_id IN ({_marks(len(fact_ids))}){until}"
            " ORDER BY at, id",
            [*fact_ids, *([] if by is None else [by])],
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
        valid_from: str,
        last_seen_at: str,
        expires_at: str | None,
        supersedes: int | None = None,
        run_id: int | None = None,
    ) -> int:
        """A new suspected fact: true from `valid_from`, last heard at `last_seen_at` (valid
        time), learnt `now` (record time)."""
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
                    last_seen_at,
                    now,
                    now,
                ),
            )
        )
        self._log(fid, None, "suspected", valid_from, None, run_id, now)
        return fid

    def restore(self, row: dict[str, object], changes: Sequence[StatusChange]) -> int:
        """A fact from a Tideline export, with its timeline, as it was (checked by the caller,
        `_restore`); its links to other facts are set afterwards (`restore_links`)."""
        columns = (
            "subject", "category", "value", "status", "confidence", "prior", "source_type",
            "mention_count", "decay_days", "expires_at", "valid_from", "valid_to",
            "last_seen_at", "rejected_why", "created_at", "updated_at", "retired_at",
        )  # fmt: skip
        fid = int(
            self.db.scalar(
                f"INSERT INTO facts({', '.join(columns)}) VALUES ({_marks(len(columns))})"
                " RETURNING id",
                [row[c] for c in columns],
            )
        )
        for c in changes:
            self._log(fid, c.from_status, c.to_status, c.at, c.why, None, c.recorded_at)
        return fid

    def restore_links(self, fact_id: int, supersedes: int | None, merged_into: int | None) -> None:
        self.db.execute(
            "UPDATE facts SET supersedes = ?, merged_into = ? WHERE id = ?",
            (supersedes, merged_into, fact_id),
        )

    def add_evidence(
        self,
        fact_id: int,
        *,
        turn_id: int | None,
        observation_id: int | None,
        polarity: str,
        said_at: str | None,
        now: str,
    ) -> bool:
        """Link evidence once (said at `said_at`, valid time); False when this exact link already
        existed."""
        cur = self.db.execute(
            """INSERT INTO fact_evidence(fact_id, turn_id, observation_id, polarity, created_at,
                said_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id""",
            (fact_id, turn_id, observation_id, polarity, now, said_at),
        )
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def mention(
        self, fact_id: int, *, seen_at: str, expires_at: str | None, now: str, count: int = 1
    ) -> None:
        """More mentions: the count grows and the fact's life restarts from `seen_at` (valid
        time: the latest supporting evidence, which the caller takes as the later of the two)."""
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
        """Move a fact at `at` (valid time); final statuses record it as their end (`valid_to`),
        the reason, and when Tideline retired it (`retired_at`, record time)."""
        final = to in FINAL_STATUSES
        self.db.execute(
            """UPDATE facts SET status = ?, valid_to = ?, rejected_why = ?,
                merged_into = COALESCE(?, merged_into), updated_at = ?,
                retired_at = COALESCE(?, retired_at) WHERE id = ?""",
            (
                to,
                at if final else fact.valid_to,
                why if to == "rejected" else fact.rejected_why,
                merged_into,
                now,
                now if final else None,
                fact.id,
            ),
        )
        self._log(fact.id, fact.status, to, at, why, run_id, now)

    def set_valid_from(self, fact_id: int, valid_from: str, now: str) -> None:
        """An earlier start (a merged duplicate was heard before the fact kept)."""
        self.db.execute(
            "UPDATE facts SET valid_from = ?, updated_at = ? WHERE id = ? AND valid_from > ?",
            (valid_from, now, fact_id, valid_from),
        )

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
        now: str,
    ) -> None:
        self.db.execute(
            "INSERT INTO fact_changes(fact_id, from_status, to_status, at, why, run_id,"
            " recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (fact_id, from_status, to, at, why, run_id, now),
        )
