"""Owner of `events`: dated happenings that expire on their own after `decay_days`.

Closing an event sets `status='closed'` and `closed_at`; the row stays on the timeline.
"""

from __future__ import annotations

from tideline.profile._drafts import EventDraft
from tideline.profile._types import EVENT_STATUSES, Event
from tideline.store import Storage


class EventStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            f"""CREATE TABLE events(
                id INTEGER PRIMARY KEY,
                title TEXT NOT NULL,
                details TEXT NOT NULL DEFAULT '',
                importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
                decay_days INTEGER CHECK (decay_days >= 1),
                happened_at TEXT NOT NULL,
                expires_at TEXT,
                status TEXT NOT NULL DEFAULT 'active' CHECK (status IN {EVENT_STATUSES!r}),
                closed_at TEXT,
                run_id INTEGER,
                created_at TEXT NOT NULL)"""
        )
        db.execute("CREATE INDEX events_status ON events(status, expires_at)")

    def insert(
        self, draft: EventDraft, *, now: str, expires_at: str | None, run_id: int | None
    ) -> int:
        return int(
            self.db.scalar(
                """INSERT INTO events(title, details, importance, decay_days, happened_at,
                    expires_at, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
                (
                    draft.title,
                    draft.details,
                    draft.importance,
                    draft.decay_days,
                    draft.happened_at or now,
                    expires_at,
                    run_id,
                    now,
                ),
            )
        )

    def list(self, *, active: bool | None = None) -> list[Event]:
        sql = "SELECT id, title, details, importance, decay_days, happened_at, expires_at, status,"
        sql += " closed_at, created_at FROM events"
        if active is not None:
            sql += " WHERE status = 'active'" if active else " WHERE status = 'closed'"
        return [Event(**r) for r in self.db.rows(sql + " ORDER BY happened_at, id")]

    def close(self, event_id: int, at: str) -> bool:
        """Close an active event; False when it was already closed (or unknown)."""
        cur = self.db.execute(
            "UPDATE events SET status = 'closed', closed_at = ? WHERE id = ? AND status = 'active'"
            " RETURNING id",
            (at, event_id),
        )
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def count(self) -> dict[str, int]:
        return {"events": int(self.db.scalar("SELECT COUNT(*) FROM events"))}
