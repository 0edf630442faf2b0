"""Reading the agent database for the script layer, and the small write helpers every step shares.

The pure modules of `tideline.analysis` take plain data; the modules that wire them to the agent
database (`scripts`, `routing`, `attention`, `prefetch`, `scanner`, `backfill`) read through here,
so the SQL that knows the memory schema lives in one place.

Rebuilt tables are compared with what is stored before anything is written: when a step computes
exactly the rows already there, it writes nothing (so `built_at` stamps stay put and a second
`scripts all` changes nothing); otherwise the rows are replaced in one transaction.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from tideline.memory import NARRATIVE_INDEX, TURN_INDEX, Narrative
from tideline.memory._narratives import Narratives
from tideline.memory._time import now, parse_time
from tideline.store import Database

__all__ = [
    "NARRATIVE_INDEX",
    "TURN_INDEX",
    "NarrativeRow",
    "as_datetime",
    "get_narratives",
    "load_narratives",
    "load_vectors",
    "now",
    "parse_time",
    "record_run",
    "table_rows",
    "vector_model",
]


@dataclass(frozen=True, slots=True)
class NarrativeRow:
    """The columns the scripts need from one narrative."""

    id: int
    gesture: str
    context: str
    cognition_direction: str
    importance: int
    emotional: int
    recurrence: int
    unresolved: int
    weight: float
    kind: str
    tags: tuple[str, ...]
    entities_role: str
    created_at: str

    @property
    def text(self) -> str:
        """What topics are extracted from: gesture, context and cognition direction."""
        return "\n".join(
            p for p in (self.gesture, self.context, self.cognition_direction) if p.strip()
        )


def load_narratives(db: Database) -> list[NarrativeRow]:
    """Every narrative, by id, with its normalised tags (from `narrative_tags`)."""
    tags: dict[int, list[str]] = defaultdict(list)
    for nid, tag in db.execute("SELECT narrative_id, tag FROM narrative_tags ORDER BY 1, 2"):
        tags[nid].append(tag)
    rows = db.execute(
        "SELECT id, gesture, context, cognition_direction, importance, emotional, recurrence,"
        " unresolved, weight, kind, entities_role, created_at FROM narratives ORDER BY id"
    ).fetchall()
    return [
        NarrativeRow(
            id=r[0],
            gesture=r[1],
            context=r[2],
            cognition_direction=r[3],
            importance=r[4],
            emotional=r[5],
            recurrence=r[6],
            unresolved=r[7],
            weight=r[8],
            kind=r[9],
            tags=tuple(tags.get(r[0], ())),
            entities_role=r[10],
            created_at=r[11],
        )
        for r in rows
    ]


def get_narratives(db: Database, ids: Sequence[int]) -> list[Narrative]:
    """Full `Narrative` records (with source links) in the order of `ids`."""
    out: list[Narrative] = []
    store = Narratives(db)
    for start in range(0, len(ids), 500):
        out += store.get(list(ids[start : start + 500]))
    return out


def vector_model(db: Database, index: str = NARRATIVE_INDEX) -> tuple[str, int] | None:
    """(model id, dimension) of the vectors stored for `index`, or None when there are none."""
    if not db.vec_enabled or not db.table_exists(f"{index}_vec"):
        return None
    row = db.one("SELECT model_id, dim FROM vector_spaces WHERE name = ?", (index,))
    return (row["model_id"], int(row["dim"])) if row else None


def load_vectors(
    db: Database, index: str = NARRATIVE_INDEX, ids: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, float32 matrix) of the stored vectors of `index` (optionally only `ids`)."""
    space = vector_model(db, index)
    if space is None:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    dim = space[1]
    if ids is None:
        rows = db.execute(f"SELECT rowid, embedding FROM {index}_vec").fetchall()
    else:
        rows = []
        wanted = list(ids)
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            rows += db.execute(
                f"SELECT rowid, embedding FROM {index}_vec WHERE rowid IN ({marks})", part
            ).fetchall()
    rows.sort(key=lambda r: r[0])
    found = np.array([r[0] for r in rows], dtype=np.int64)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
    return found, matrix


def table_rows(db: Database, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Rows as tuples, for comparing what a step computed with what is stored."""
    return [tuple(r) for r in db.execute(sql, params)]


def as_datetime(stamp: str) -> datetime:
    """A stored `YYYY-MM-DDTHH:MM:SSZ` stamp as an aware datetime."""
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@contextmanager
def record_run(db: Database, step: str, pipeline: str = "scripts") -> Iterator[dict[str, Any]]:
    """Log one step in `runs`: 'running' first, then 'ok' with its summary or 'failed'.

    A killed run leaves its row at 'running', which is how a later reader tells it was cut short.
    """
    with db.transaction():
        db.execute(
            "INSERT INTO runs(pipeline, step, status, started_at) VALUES (?, ?, 'running', ?)",
            (pipeline, step, now()),
        )
        run_id = int(db.conn.last_insert_rowid())
    summary: dict[str, Any] = {}
    status = "failed"
    try:
        yield summary
        status = "ok"
    finally:
        with db.transaction():
            db.execute(
                "UPDATE runs SET status = ?, summary = ?, finished_at = ? WHERE id = ?",
                (status, json.dumps(summary, ensure_ascii=False, default=str), now(), run_id),
            )
