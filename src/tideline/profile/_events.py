"""Owner of `events`: dated happenings that expire on their own after `decay_days`.

Two clocks (migration 3). Valid time: the event's date range `valid_from`–`valid_to` (a day,
"last week", "next month": resolved against the turn that mentioned it, `said_at`), its expiry
`expires_at` (the end of the range + `decay_days`) and `closed_at` (when it stopped being
relevant). Record time: `created_at`, and `retired_at` when it was closed. An event is active
while it is not closed and not past its expiry: one that expired but was not closed yet is
never listed as active. Closing sets `status='closed'`; the row stays on the timeline.
"""

from __future__ import annotations

import builtins  # `list` below is a method of the store: signatures after it say `builtins.list`

from tideline.profile._drafts import EventDraft
from tideline.profile._records import EVENT_STATUSES, Event
from tideline.store import Storage

_COLUMNS = (
    "id, title, details, importance, decay_days, valid_from, valid_to, expires_at, status,"
    " closed_at, created_at, said_at, phrase, retired_at"
)


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

    @staticmethod
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: the date range in valid time, when it was said, the phrase, retirement.
        A stored event was a moment (`happened_at`): it becomes the range's start and end."""
        db.execute("ALTER TABLE events RENAME COLUMN happened_at TO valid_from")
        for column in ("valid_to", "said_at", "retired_at"):
            db.execute(f"ALTER TABLE events ADD COLUMN {column} TEXT")
        db.execute("ALTER TABLE events ADD COLUMN phrase TEXT NOT NULL DEFAULT ''")
        db.execute(
            "UPDATE events SET valid_to = valid_from, said_at = valid_from,"
            " retired_at = CASE WHEN status = 'closed' THEN closed_at END"
        )
        db.execute("CREATE INDEX events_valid ON events(valid_from, valid_to)")

    def insert(
        self, draft: EventDraft, *, valid_from: str, expires_at: str | None, now: str,
        run_id: int | None,
    ) -> int:  # fmt: skip
        return int(
            self.db.scalar(
                """INSERT INTO events(title, details, importance, decay_days, valid_from,
                    valid_to, said_at, phrase, expires_at, run_id, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
                (
                    draft.title,
                    draft.details,
                    draft.importance,
                    draft.decay_days,
                    valid_from,
                    max(draft.valid_to or valid_from, valid_from),
                    draft.said_at or valid_from,
                    draft.phrase,
                    expires_at,
                    run_id,
                    now,
                ),
            )
        )

    def restore(self, e: Event) -> bool:
        """An event from a Tideline export as it was; False when one with the same title,
        start and record time is already here."""
        cur = self.db.execute(
            """INSERT INTO events(title, details, importance, decay_days, valid_from, valid_to,
                said_at, phrase, expires_at, status, closed_at, created_at, retired_at)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM events
                WHERE title = ? AND valid_from = ? AND created_at = ?) RETURNING id""",
            (
                e.title, e.details, e.importance, e.decay_days, e.valid_from, e.valid_to,
                e.said_at, e.phrase, e.expires_at, e.status, e.closed_at, e.created_at,
                e.retired_at, e.title, e.valid_from, e.created_at,
            ),
        )  # fmt: skip
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def list(self, *, active: bool | None = None, now: str | None = None) -> list[Event]:
        """Events by their start. `active=True`: not closed and, given `now`, not expired by then;
        `active=False`: the others (closed, or expired by `now`)."""
        live = (
            "status = 'active'"
            " AND (expires_at IS NULL OR CAST(? AS TEXT) IS NULL OR expires_at > ?)"
        )
        sql, params = f"SELECT {_COLUMNS} FROM events", []
        if active is not None:
            sql += f" WHERE {live}" if active else f" WHERE NOT ({live})"
            params = [now, now]
        return [Event(**r) for r in self.db.rows(sql + " ORDER BY valid_from, id", params)]

    def known_at(self, at: str) -> builtins.list[Event]:
        """Events by their start that had begun or been mentioned by `at` and had neither
        lapsed nor been closed then (what `_as_of.event_at` shows)."""
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM events"
            " WHERE (valid_from <= ? OR COALESCE(NULLIF(said_at, ''), created_at) <= ?)"
            " AND (expires_at IS NULL OR expires_at > ?) AND (closed_at IS NULL OR closed_at > ?)"
            " ORDER BY valid_from, id",
            (at, at, at, at),
        )
        return [Event(**r) for r in rows]

    def between(self, since: str, until: str) -> builtins.list[Event]:
        """Events whose date range overlaps [since, until] (valid time), by start: the calendar."""
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM events WHERE valid_from <= ?"
            " AND COALESCE(valid_to, valid_from) >= ? ORDER BY valid_from, id",
            (until, since),
        )
        return [Event(**r) for r in rows]

    def close(self, event_id: int, *, at: str, now: str) -> bool:
        """Close an active event at `at` (valid time); False when it was already closed (or
        unknown)."""
        cur = self.db.execute(
            "UPDATE events SET status = 'closed', closed_at = ?, retired_at = ?"
            " WHERE id = ? AND status = 'active' RETURNING id",
            (at, now, event_id),
        )
        return bool(cur.fetchall())  # drain: a pending RETURNING blocks COMMIT

    def count(self) -> dict[str, int]:
        return {"events": int(self.db.scalar("SELECT COUNT(*) FROM events"))}
