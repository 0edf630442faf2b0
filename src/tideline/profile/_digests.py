"""Owner of `session_digests`: what Sleep's extraction said about each session it read.

One row per (session, through_turn_id): the session's summary and topic tags, or the reason it
was skipped (tool-only). Written inside the changeset's transaction together with
`processed_sessions`, so a digest exists exactly when its turns count as processed. Append-only;
the cross-validation step reads the last three months of summaries as context. Two clocks:
`valid_from`–`valid_to` (migration 3) is when the digested turns were said — what "the last
three months" and "sessions since the trajectory" count by; `made_at` is record time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from tideline.profile._records import _Dict
from tideline.store import Storage


@dataclass
class SessionDigest(_Dict):
    session_id: int
    through_turn_id: int
    summary: str
    tags: list[str]
    skipped: str | None  # why the session held nothing personal (None: it was digested)
    made_at: str  # record time
    run_id: int | None
    valid_from: str | None = None  # valid time: the digested turns' first and last
    valid_to: str | None = None


class DigestStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            """CREATE TABLE session_digests(
                id INTEGER PRIMARY KEY,
                session_id INTEGER NOT NULL,
                through_turn_id INTEGER NOT NULL,
                summary TEXT NOT NULL DEFAULT '',
                tags TEXT NOT NULL DEFAULT '[]',
                skipped TEXT,
                run_id INTEGER,
                made_at TEXT NOT NULL,
                UNIQUE (session_id, through_turn_id))"""
        )
        db.execute("CREATE INDEX session_digests_made ON session_digests(made_at)")

    @staticmethod
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: when each digest's turns were said."""
        db.execute("ALTER TABLE session_digests ADD COLUMN valid_from TEXT")
        db.execute("ALTER TABLE session_digests ADD COLUMN valid_to TEXT")
        db.execute("CREATE INDEX session_digests_valid ON session_digests(valid_to)")

    def backfill_two_clocks(self, span: Callable[[int, int, int], tuple[str, str] | None]) -> None:
        """Migration 3: each digest covers its session's turns after the previous digest of the
        session, through its own; `span(session, after, through)` says when they were said."""
        rows = self.db.rows(
            "SELECT id, session_id, through_turn_id, made_at FROM session_digests"
            " ORDER BY session_id, through_turn_id"
        )
        out: list[tuple[str, str, int]] = []
        after: dict[int, int] = {}
        for r in rows:
            sid = r["session_id"]
            found = span(sid, after.get(sid, 0), r["through_turn_id"]) or (r["made_at"],) * 2
            out.append((*found, r["id"]))
            after[sid] = r["through_turn_id"]
        self.db.executemany(
            "UPDATE session_digests SET valid_from = ?, valid_to = ? WHERE id = ?", out
        )

    def add(
        self,
        session_id: int,
        through_turn_id: int,
        *,
        summary: str,
        tags: list[str],
        skipped: str | None,
        valid_from: str | None,
        valid_to: str | None,
        now: str,
        run_id: int | None,
    ) -> None:
        self.db.execute(
            "INSERT INTO session_digests(session_id, through_turn_id, summary, tags, skipped,"
            " run_id, made_at, valid_from, valid_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (
                session_id,
                through_turn_id,
                summary,
                json.dumps(tags, ensure_ascii=False),
                skipped,
                run_id,
                now,
                valid_from or now,
                valid_to or valid_from or now,
            ),
        )

    def list(self, since: str | None = None) -> list[SessionDigest]:
        """Digests whose turns were said at or after `since` (valid time), oldest first."""
        rows = self.db.rows(
            "SELECT session_id, through_turn_id, summary, tags, skipped, made_at, run_id,"
            " valid_from, valid_to FROM session_digests WHERE valid_to >= ?"
            " ORDER BY valid_from, id",
            (since or "",),
        )
        return [SessionDigest(**{**r, "tags": json.loads(r["tags"])}) for r in rows]

    def count_since(self, since: str) -> int:
        """Sessions digested (not skipped) with turns said after `since` (valid time): how far
        the trajectory is behind the conversation."""
        return int(
            self.db.scalar(
                "SELECT count(DISTINCT session_id) FROM session_digests"
                " WHERE valid_to > ? AND skipped IS NULL",
                (since,),
            )
        )

    def count(self) -> dict[str, int]:
        return {"session_digests": int(self.db.scalar("SELECT COUNT(*) FROM session_digests"))}
