"""Owner of `session_digests`: what Sleep's extraction said about each session it read.

One row per (session, through_turn_id): the session's summary and topic tags, or the reason it
was skipped (tool-only). Written inside the changeset's transaction together with
`processed_sessions`, so a digest exists exactly when its turns count as processed. Append-only;
the cross-validation step reads the last three months of summaries as context.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tideline.profile._types import _Dict
from tideline.store import Storage


@dataclass
class SessionDigest(_Dict):
    session_id: int
    through_turn_id: int
    summary: str
    tags: list[str]
    skipped: str | None  # why the session held nothing personal (None: it was digested)
    made_at: str
    run_id: int | None


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

    def add(
        self,
        session_id: int,
        through_turn_id: int,
        *,
        summary: str,
        tags: list[str],
        skipped: str | None,
        now: str,
        run_id: int | None,
    ) -> None:
        self.db.execute(
            "INSERT INTO session_digests(session_id, through_turn_id, summary, tags, skipped,"
            " run_id, made_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                session_id,
                through_turn_id,
                summary,
                json.dumps(tags, ensure_ascii=False),
                skipped,
                run_id,
                now,
            ),
        )

    def list(self, since: str | None = None) -> list[SessionDigest]:
        rows = self.db.rows(
            "SELECT session_id, through_turn_id, summary, tags, skipped, made_at, run_id"
            " FROM session_digests WHERE made_at >= ? ORDER BY made_at, id",
            (since or "",),
        )
        return [SessionDigest(**{**r, "tags": json.loads(r["tags"])}) for r in rows]

    def count_since(self, since: str) -> int:
        """Sessions digested (not skipped) after `since`: how far the trajectory is behind."""
        return int(
            self.db.scalar(
                "SELECT count(DISTINCT session_id) FROM session_digests"
                " WHERE made_at > ? AND skipped IS NULL",
                (since,),
            )
        )

    def count(self) -> dict[str, Any]:
        return {"session_digests": int(self.db.scalar("SELECT COUNT(*) FROM session_digests"))}
