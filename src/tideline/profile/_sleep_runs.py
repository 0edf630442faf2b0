"""Owner of `sleep_runs` and `processed_sessions`: what each Sleep did and which turns it digested.

A run row is written outside the profile transaction (start, then finish), so a failed run stays
recorded after its changes rolled back. `processed_sessions` is written inside the changeset's
transaction (seed step 14): a session counts as processed up to `through_turn_id`, so turns that
arrive later in the same session are picked up by the next run.
"""

from __future__ import annotations

from typing import Any

from tideline.errors import NotFound
from tideline.profile._records import RUN_STATUSES, RUN_STATUSES_V1, SleepRun
from tideline.store import RunLog, Storage, allow_values


class RunStore:
    def __init__(self, db: Storage):
        self.db = db
        self.log = RunLog.of_llm_runs(db, "sleep_runs", ("steps", "version"), ("steps",))

    @staticmethod
    def create_tables(db: Storage) -> None:
        RunLog.create_llm_runs(
            db, "sleep_runs", RUN_STATUSES, "steps TEXT NOT NULL DEFAULT '[]', version INTEGER"
        )
        db.execute(
            """CREATE TABLE processed_sessions(
                id INTEGER PRIMARY KEY,
                session_id INTEGER NOT NULL,
                through_turn_id INTEGER NOT NULL,
                run_id INTEGER REFERENCES sleep_runs(id),
                processed_at TEXT NOT NULL,
                UNIQUE (session_id, through_turn_id))"""
        )

    @staticmethod
    def allow_skipped(db: Storage) -> None:
        allow_values(db, "sleep_runs", "status", RUN_STATUSES_V1, RUN_STATUSES)

    # -- runs --------------------------------------------------------------------------------
    def start(self, prompt_versions: dict[str, Any], now: str) -> int:
        return self.log.start(now, prompt_versions=prompt_versions)

    def finish(
        self,
        run_id: int,
        *,
        status: str,
        steps: list[Any],
        tokens_in: int,
        tokens_out: int,
        errors: list[Any],
        version: int | None,
        now: str,
    ) -> None:
        values = {"steps": steps, "tokens_in": tokens_in, "tokens_out": tokens_out}
        if not self.log.finish(run_id, status, now, **values, errors=errors, version=version):
            raise NotFound(f"sleep run #{run_id} does not exist; start one with start_run()")

    def get(self, run_id: int) -> SleepRun | None:
        row = self.log.get(run_id)
        return None if row is None else SleepRun(**row)

    def list(self, limit: int = 20) -> list[SleepRun]:
        return [SleepRun(**r) for r in self.log.recent(limit)]

    # -- processed sessions ------------------------------------------------------------------
    def mark_processed(
        self, session_id: int, through_turn_id: int, *, now: str, run_id: int | None
    ) -> None:
        self.db.execute(
            "INSERT INTO processed_sessions(session_id, through_turn_id, run_id, processed_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (session_id, through_turn_id, run_id, now),
        )

    def processed(self) -> dict[int, int]:
        """Each processed session → the last turn id digested."""
        rows = self.db.execute(
            "SELECT session_id, MAX(through_turn_id) FROM processed_sessions GROUP BY session_id"
        )
        return {s: t for s, t in rows}

    def count(self) -> dict[str, int]:
        return {
            t: int(self.db.scalar(f"SELECT COUNT(*) FROM {t}"))
            for t in ("sleep_runs", "processed_sessions")
        }
