"""Owner of `session_summaries`: the sliding summary of each live conversation (session memory).

One row per session, updated in place: the summary text and the last turn it covers
(`through_turn_id`), so the next update only reads the turns after it. Derived data: deleting a
row only costs one LLM call to rebuild it. The table is created by this package's own migration
set, applied when `SessionMemory` is built.
"""

from __future__ import annotations

from tideline.store import Migrations, Storage

CONSOLIDATE_MIGRATIONS = Migrations("consolidate")


@CONSOLIDATE_MIGRATIONS.step(1)
def _session_summaries(db: Storage) -> None:
    db.execute(
        """CREATE TABLE session_summaries(
            session_id INTEGER PRIMARY KEY,
            through_turn_id INTEGER NOT NULL,
            summary TEXT NOT NULL,
            prompt TEXT NOT NULL,
            updated_at TEXT NOT NULL)"""
    )


class SummaryStore:
    def __init__(self, db: Storage):
        self.db = db
        CONSOLIDATE_MIGRATIONS.apply(db)

    def get(self, session_id: int) -> tuple[int, str]:
        """(last turn covered, summary); (0, "") before the first update."""
        row = self.db.one(
            "SELECT through_turn_id, summary FROM session_summaries WHERE session_id = ?",
            (session_id,),
        )
        return (0, "") if row is None else (int(row["through_turn_id"]), str(row["summary"]))

    def put(self, session_id: int, through: int, summary: str, prompt: str, now: str) -> None:
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO session_summaries(session_id, through_turn_id, summary, prompt,"
                " updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET"
                " through_turn_id = excluded.through_turn_id, summary = excluded.summary,"
                " prompt = excluded.prompt, updated_at = excluded.updated_at"
                " WHERE excluded.through_turn_id > session_summaries.through_turn_id",
                (session_id, through, summary, prompt, now),
            )
