"""Owner of `observations`: what the extraction step heard, before it becomes a fact.

Observations are append-only; `processed` flips once the integration step has classified them.
Third-party observations (`about` ≠ "user") are stored the same way, apart by that column.
Two clocks: `said_at` (valid time: when its first turn was said) and `created_at` (record time).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tideline.profile._drafts import ObservationDraft
from tideline.profile._records import Observation
from tideline.store import Storage, id_lists


def _observation(row: dict[str, object]) -> Observation:
    row = dict(row)
    row["turn_ids"] = json.loads(str(row["turn_ids"]))
    row["processed"] = bool(row["processed"])
    return Observation(**row)  # type: ignore[arg-type]


class ObservationStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            """CREATE TABLE observations(
                id INTEGER PRIMARY KEY,
                session_id INTEGER,
                turn_ids TEXT NOT NULL DEFAULT '[]',
                type TEXT NOT NULL,
                topic TEXT NOT NULL DEFAULT '',
                text TEXT NOT NULL,
                about TEXT NOT NULL DEFAULT 'user',
                processed INTEGER NOT NULL DEFAULT 0,
                run_id INTEGER,
                created_at TEXT NOT NULL)"""
        )
        db.execute("CREATE INDEX observations_open ON observations(processed, session_id)")

    @staticmethod
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: when each observation was said (valid time)."""
        db.execute("ALTER TABLE observations ADD COLUMN said_at TEXT")

    def backfill_two_clocks(self, turn_at: dict[int, str]) -> dict[int, str]:
        """Migration 3: each observation said when its earliest turn was (else when it was
        recorded); returns observation id → said_at for the evidence that cites it."""
        out = {}
        for o in self.db.rows("SELECT id, turn_ids, created_at FROM observations"):
            times = [turn_at[t] for t in json.loads(o["turn_ids"]) if t in turn_at]
            out[o["id"]] = min(times) if times else o["created_at"]
        self.db.executemany(
            "UPDATE observations SET said_at = ? WHERE id = ?", [(t, i) for i, t in out.items()]
        )
        return out

    def turn_ids(self) -> set[int]:
        """Every turn an observation cites (what the backfill looks up)."""
        rows = self.db.rows("SELECT turn_ids FROM observations")
        return {t for r in rows for t in json.loads(r["turn_ids"])}

    def insert(self, draft: ObservationDraft, *, said_at: str, now: str, run_id: int | None) -> int:
        return int(
            self.db.scalar(
                """INSERT INTO observations(session_id, turn_ids, type, topic, text, about,
                    run_id, created_at, said_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    RETURNING id""",
                (
                    draft.session_id,
                    json.dumps(list(draft.turn_ids)),
                    draft.type,
                    draft.topic,
                    draft.text,
                    draft.about,
                    run_id,
                    now,
                    said_at,
                ),
            )
        )

    def restore(self, o: Observation) -> int:
        """An observation from a Tideline export as it was (its turns and session already this
        home's; the caller looks for it first with `find`)."""
        return int(
            self.db.scalar(
                """INSERT INTO observations(session_id, turn_ids, type, topic, text, about,
                    processed, created_at, said_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    RETURNING id""",
                (
                    o.session_id, json.dumps(o.turn_ids), o.type, o.topic, o.text, o.about,
                    int(o.processed), o.created_at, o.said_at,
                ),
            )
        )  # fmt: skip

    def find(self, text: str, created_at: str) -> int | None:
        """The id of the observation with this text and record time, if any."""
        found = self.db.scalar(
            "SELECT id FROM observations WHERE text = ? AND created_at = ?", (text, created_at)
        )
        return None if found is None else int(found)

    def list(self, *, processed: bool | None = None, about: str | None = None) -> list[Observation]:
        where: list[str] = ["1 = 1"]
        params: list[object] = []
        if processed is not None:
            where.append("processed = ?")
            params.append(int(processed))
        if about is not None:
            where.append("about = ?")
            params.append(about)
        rows = self.db.rows(
            f"SELECT * FROM observations WHERE {' AND '.join(where)} ORDER BY id", params
        )
        return [_observation(r) for r in rows]

    def said_at(self, observation_id: int) -> str | None:
        found = self.db.scalar("SELECT said_at FROM observations WHERE id = ?", (observation_id,))
        return None if found is None else str(found)

    def sessions(self, ids: Sequence[int]) -> dict[int, int | None]:
        """Each observation's session (None: it was made outside one)."""
        out: dict[int, int | None] = {}
        for marks, part in id_lists(ids):
            for oid, sid in self.db.execute(
                f"SELECT id, session_id FROM observations WHERE id IN ({marks})", part
            ):
                out[int(oid)] = None if sid is None else int(sid)
        return out

    def exists(self, observation_id: int) -> bool:
        return bool(self.db.scalar("SELECT 1 FROM observations WHERE id = ?", (observation_id,)))

    def mark_processed(self, ids: Sequence[int]) -> None:
        self.db.executemany(
            "UPDATE observations SET processed = 1 WHERE id = ?", [(i,) for i in ids]
        )

    def count(self) -> dict[str, int]:
        return {"observations": int(self.db.scalar("SELECT COUNT(*) FROM observations"))}
