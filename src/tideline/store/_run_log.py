"""Run records, kept one way for every pipeline: Sleep (`sleep_runs`), DREAM (`dream_runs`) and
the analysis scripts (`runs`).

A run is a row started `running` and finished with its status (`done`, `skipped` when it did
nothing, `failed`, ...), its tokens, its steps or layers and the time it ended. Start and finish
are transactions of their own, outside the run's work, so a run that fails stays recorded after
its changes rolled back, and one the process died in stays `running` until the next run, holding
the pipeline's lock, closes it as interrupted. A running run's tokens are written as it spends
them, so they survive a kill.

Each table keeps its one owner, the module that declares its columns, creates it in its
migration set and reads it in its own ways (profile/_sleep_runs.py, consolidate/dream/_dream_runs.py,
analysis/_store.py); the bookkeeping they share is this class, handed the owner's table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tideline.store._sql import storable
from tideline.store._storage import Storage

INTERRUPTED = "interrupted: the process ended before the run finished"
#: The columns `create_llm_runs` gives every LLM pipeline's run table (the runner's), and which
#: of them hold JSON.
LLM_RUN_COLUMNS = (
    "id",
    "status",
    "tokens_in",
    "tokens_out",
    "errors",
    "prompt_versions",
    "started_at",
    "finished_at",
)
_LLM_RUN_JSON = ("errors", "prompt_versions")


def _encoded(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class RunLog:
    """The run records in one owner's `table` (columns `id`, `status`, `started_at`,
    `finished_at`, and, where kept, `tokens_in`, `tokens_out` and `errors`); `json_columns` are
    written as JSON and read back as values."""

    def __init__(
        self, db: Storage, table: str, columns: tuple[str, ...], json_columns: tuple[str, ...]
    ):
        self.db = db
        self.table = table
        self.columns = columns
        self.json_columns = set(json_columns)

    @classmethod
    def of_llm_runs(
        cls, db: Storage, table: str, columns: tuple[str, ...], json_columns: tuple[str, ...]
    ) -> RunLog:
        """The log of an LLM pipeline's run table (made by `create_llm_runs`): the runner's
        columns and the owner's own `columns`, `json_columns` of them JSON."""
        return cls(db, table, LLM_RUN_COLUMNS + columns, _LLM_RUN_JSON + json_columns)

    @staticmethod
    def create_llm_runs(db: Storage, table: str, statuses: Sequence[str], columns: str) -> None:
        """The table of an LLM pipeline's runs (Sleep's, DREAM's): the columns its runner keeps
        (status, tokens spent, errors, the prompt versions used, start and end) and the owner's
        `columns`."""
        db.execute(
            f"""CREATE TABLE {table}(
                id INTEGER PRIMARY KEY,
                status TEXT NOT NULL CHECK (status IN {tuple(statuses)!r}),
                {columns},
                tokens_in INTEGER NOT NULL DEFAULT 0,
                tokens_out INTEGER NOT NULL DEFAULT 0,
                errors TEXT NOT NULL DEFAULT '[]',
                prompt_versions TEXT NOT NULL DEFAULT '{{}}',
                started_at TEXT NOT NULL,
                finished_at TEXT)"""
        )

    def _values(self, values: dict[str, Any]) -> list[Any]:
        return [_encoded(v) if k in self.json_columns else v for k, v in values.items()]

    def start(self, now: str, **values: Any) -> int:
        """A new run, `running` since `now`, with the owner's `values`; its id."""
        names = ", ".join(["status", "started_at", *values])
        marks = ", ".join(["'running'", "?", *("?" * len(values))])
        with self.db.transaction():
            return int(
                self.db.scalar(
                    f"INSERT INTO {self.table}({names}) VALUES ({marks}) RETURNING id",
                    (now, *self._values(values)),
                )
            )

    def record_tokens(self, run_id: int, tokens_in: int, tokens_out: int) -> None:
        """What a running run has spent so far (kept if the process dies before it finishes)."""
        with self.db.transaction():
            self.db.execute(
                f"UPDATE {self.table} SET tokens_in = ?, tokens_out = ? WHERE id = ?"
                " AND status = 'running'",
                (tokens_in, tokens_out, run_id),
            )

    def finish(self, run_id: int, status: str, now: str, **values: Any) -> bool:
        """The run ends with `status` and the owner's `values`; False when there is no such
        run (the owner says so in its own words)."""
        sets = ", ".join(f"{name} = ?" for name in ["status", *values, "finished_at"])
        with self.db.transaction():
            return bool(
                self.db.execute(
                    f"UPDATE {self.table} SET {sets} WHERE id = ? RETURNING id",
                    (status, *self._values(values), now, run_id),
                ).fetchall()
            )

    def close_interrupted(self, now: str) -> list[int]:
        """Runs left `running` (the process died; the caller holds the pipeline's lock now) →
        `failed`, saying so; their ids."""
        with self.db.transaction():
            return [
                int(r[0])
                for r in self.db.execute(
                    f"UPDATE {self.table} SET status = 'failed', finished_at = ?, errors = ?"
                    " WHERE status = 'running' RETURNING id",
                    (now, _encoded([INTERRUPTED])),
                )
            ]

    def get(self, run_id: int) -> dict[str, Any] | None:
        """One run's columns, JSON read back; None when there is no such run."""
        if not storable(run_id):
            return None
        rows = self.db.rows(
            f"SELECT {', '.join(self.columns)} FROM {self.table} WHERE id = ?", (run_id,)
        )
        return self._decoded(rows[0]) if rows else None

    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        """The latest `limit` runs, newest first (the runs page, `tideline sleep runs`)."""
        rows = self.db.rows(
            f"SELECT {', '.join(self.columns)} FROM {self.table} ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [self._decoded(r) for r in rows]

    def _decoded(self, row: dict[str, Any]) -> dict[str, Any]:
        for key in self.json_columns & set(row):
            row[key] = json.loads(row[key])
        return row
