"""Owner of `dream_runs` and `dream_layers`: what each dream run did, layer by layer, and the
names of the layers it records.

A run row is started and finished outside the layers' transactions, so a failed run stays
recorded. A layer's row is written in the SAME transaction as the layer's own writes when it
succeeds — a layer is `done` for its day exactly when its results are in — and in a transaction
of its own when it fails, is skipped or is stopped by the budget. `finished(day)` is what the
next run reads: a layer done for a day is not redone; any other status is retried.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tideline.errors import NotFound
from tideline.store import RunLog, Storage, allow_values

RUN_STATUSES = ("running", "done", "failed", "stopped", "skipped")
RUN_STATUSES_V1 = ("running", "done", "failed", "stopped")  # before dream migration 4
LAYER_STATUSES = ("done", "skipped", "failed", "stopped")
#: DREAM's layers, in pipeline order: what the drivers offer as choices (`tideline.fields`)
#: without importing the pipeline. `_dream.LAYERS` is checked against them.
LAYER_NAMES = ("solidify", "sleep", "scripts", "comb", "drift", "dream")
_LAYER_COLUMNS = (
    "run_id, day, layer, status, seconds, tokens_in, tokens_out, changes, written, detail, note,"
    " error, prompt"
)


@dataclass
class LayerRecord:
    run_id: int
    day: str
    layer: str
    status: str
    seconds: float
    tokens_in: int
    tokens_out: int
    changes: dict[str, int]
    written: dict[str, list[int]]
    detail: dict[str, Any]
    note: str
    error: str
    prompt: str | None


@dataclass
class DreamRun:
    id: int
    day: str
    status: str
    layers: list[str]
    tokens_in: int
    tokens_out: int
    budget: int
    seconds: float
    errors: list[str]
    prompt_versions: dict[str, int]
    llm: str
    started_at: str
    finished_at: str | None
    records: list[LayerRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DreamRuns:
    def __init__(self, db: Storage):
        self.db = db
        own = ("day", "layers", "budget", "seconds", "llm")
        self.log = RunLog.of_llm_runs(db, "dream_runs", own, ("layers",))

    @staticmethod
    def create_tables(db: Storage) -> None:
        RunLog.create_llm_runs(
            db,
            "dream_runs",
            RUN_STATUSES,
            "day TEXT NOT NULL, layers TEXT NOT NULL, budget INTEGER NOT NULL DEFAULT 0,"
            " seconds REAL NOT NULL DEFAULT 0, llm TEXT NOT NULL DEFAULT ''",
        )
        db.execute(
            f"""CREATE TABLE dream_layers(
                id INTEGER PRIMARY KEY,
                run_id INTEGER NOT NULL REFERENCES dream_runs(id),
                day TEXT NOT NULL,
                layer TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN {LAYER_STATUSES!r}),
                seconds REAL NOT NULL DEFAULT 0,
                tokens_in INTEGER NOT NULL DEFAULT 0,
                tokens_out INTEGER NOT NULL DEFAULT 0,
                changes TEXT NOT NULL DEFAULT '{{}}',
                written TEXT NOT NULL DEFAULT '{{}}',
                detail TEXT NOT NULL DEFAULT '{{}}',
                note TEXT NOT NULL DEFAULT '',
                error TEXT NOT NULL DEFAULT '',
                prompt TEXT)"""
        )
        db.execute("CREATE INDEX dream_layers_day ON dream_layers(day, layer, status)")

    @staticmethod
    def allow_skipped(db: Storage) -> None:
        allow_values(db, "dream_runs", "status", RUN_STATUSES_V1, RUN_STATUSES)

    def start(
        self, day: str, layers: list[str], budget: int, prompts: dict[str, int], llm: str, now: str
    ) -> int:
        return self.log.start(
            now, day=day, layers=layers, budget=budget, prompt_versions=prompts, llm=llm
        )

    def record_layer(self, rec: LayerRecord) -> None:
        """One layer's outcome; inside the layer's transaction when it is `done`."""
        with self.db.transaction():
            self.db.execute(
                f"INSERT INTO dream_layers({_LAYER_COLUMNS}) VALUES"
                " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rec.run_id,
                    rec.day,
                    rec.layer,
                    rec.status,
                    rec.seconds,
                    rec.tokens_in,
                    rec.tokens_out,
                    json.dumps(rec.changes),
                    json.dumps(rec.written),
                    json.dumps(rec.detail, ensure_ascii=False),
                    rec.note,
                    rec.error,
                    rec.prompt,
                ),
            )

    def finish(
        self,
        run_id: int,
        *,
        status: str,
        tokens_in: int,
        tokens_out: int,
        seconds: float,
        errors: list[str],
        now: str,
    ) -> None:
        values = {"tokens_in": tokens_in, "tokens_out": tokens_out, "seconds": seconds}
        if not self.log.finish(run_id, status, now, **values, errors=errors):
            raise NotFound(f"dream run #{run_id} does not exist")

    def finished(self, day: str) -> dict[str, int]:
        """Layers done for `day` → the run that did them."""
        return {
            layer: run_id
            for layer, run_id in self.db.execute(
                "SELECT layer, min(run_id) FROM dream_layers WHERE day = ? AND status = 'done'"
                " GROUP BY layer",
                (day,),
            )
        }

    def details(self, layer: str, limit: int = 1000) -> list[dict[str, Any]]:
        """The `detail` of a layer's done records, newest first (drift reads its past seeds)."""
        return [
            json.loads(r[0])
            for r in self.db.execute(
                "SELECT detail FROM dream_layers WHERE layer = ? AND status = 'done'"
                " ORDER BY id DESC LIMIT ?",
                (layer, limit),
            )
        ]

    def get(self, run_id: int) -> DreamRun:
        row = self.log.get(run_id)
        if row is None:
            raise NotFound(f"dream run #{run_id} does not exist; list them with Dream.runs()")
        return self._run(row)

    def recent(self, limit: int = 20) -> list[DreamRun]:
        return [self._run(r) for r in self.log.recent(limit)]

    def _run(self, row: dict[str, Any]) -> DreamRun:
        """A run with its layers' records, in the order they were written."""
        recs = self.db.rows(
            f"SELECT {_LAYER_COLUMNS} FROM dream_layers WHERE run_id = ? ORDER BY id",
            (row["id"],),
        )
        for rec in recs:
            for key in ("changes", "written", "detail"):
                rec[key] = json.loads(rec[key])
        return DreamRun(**row, records=[LayerRecord(**x) for x in recs])
