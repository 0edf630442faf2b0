"""Owner of `threads` and `thread_memories`: the open directions the dream layers keep.

A thread is an exploration direction — a question left hanging, a plan, a worry, a pattern
forming, or two memories that contradict each other (`kind` "conflict"). Combing opens them
(with the memories that raised them), touches them when a day's memories move them (more
memories, a note, `touched_at`) and closes them (`resolved` or `dropped`, never deleted). Open
threads are what injection's memory map (T3) lists.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tideline.errors import InvalidInput, NotFound
from tideline.store import Storage, storable

STATUSES = ("open", "resolved", "dropped")
KINDS = ("direction", "conflict")
_COLUMNS = "id, title, why, kind, status, notes, opened_at, touched_at, closed_at, run_id"


@dataclass
class Thread:
    id: int
    title: str
    why: str
    kind: str
    status: str
    notes: list[str]
    opened_at: str
    touched_at: str
    closed_at: str | None
    run_id: int | None
    memories: list[int] = field(default_factory=list)  # the narratives that raised or moved it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Threads:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            f"""CREATE TABLE threads(
                id INTEGER PRIMARY KEY,
                title TEXT NOT NULL,
                why TEXT NOT NULL DEFAULT '',
                kind TEXT NOT NULL CHECK (kind IN {KINDS!r}),
                status TEXT NOT NULL CHECK (status IN {STATUSES!r}),
                notes TEXT NOT NULL DEFAULT '[]',
                opened_at TEXT NOT NULL,
                touched_at TEXT NOT NULL,
                closed_at TEXT,
                run_id INTEGER)"""
        )
        db.execute("CREATE INDEX threads_status ON threads(status, touched_at)")
        db.execute(
            """CREATE TABLE thread_memories(
                thread_id INTEGER NOT NULL REFERENCES threads(id),
                narrative_id INTEGER NOT NULL,
                PRIMARY KEY (thread_id, narrative_id)) WITHOUT ROWID"""
        )

    # -- writes, inside the caller's transaction (the comb layer's) ---------------------------
    def open(
        self,
        title: str,
        why: str,
        memories: Sequence[int],
        *,
        kind: str = "direction",
        now: str,
        run_id: int | None,
    ) -> int:
        if kind not in KINDS:
            raise InvalidInput(f"thread kind {kind!r} is unknown; use one of {list(KINDS)}")
        if not title.strip():
            raise InvalidInput("a thread needs a title: the direction or question, in a line")
        tid = int(
            self.db.scalar(
                "INSERT INTO threads(title, why, kind, status, opened_at, touched_at, run_id)"
                " VALUES (?, ?, ?, 'open', ?, ?, ?) RETURNING id",
                (title.strip()[:300], why.strip()[:2000], kind, now, now, run_id),
            )
        )
        self._link(tid, memories)
        return tid

    def touch(self, thread_id: int, note: str, memories: Sequence[int], *, now: str) -> None:
        thread = self.require(thread_id)
        notes = [*thread.notes, note.strip()[:2000]] if note.strip() else thread.notes
        self.db.execute(
            "UPDATE threads SET notes = ?, touched_at = ? WHERE id = ?",
            (json.dumps(notes, ensure_ascii=False), now, thread_id),
        )
        self._link(thread_id, memories)

    def close(self, thread_id: int, status: str, why: str, *, now: str) -> None:
        if status not in STATUSES[1:]:
            raise InvalidInput(f"close a thread as one of {list(STATUSES[1:])}, not {status!r}")
        thread = self.require(thread_id)
        notes = [*thread.notes, why.strip()[:2000]] if why.strip() else thread.notes
        self.db.execute(
            "UPDATE threads SET status = ?, notes = ?, touched_at = ?, closed_at = ? WHERE id = ?",
            (status, json.dumps(notes, ensure_ascii=False), now, now, thread_id),
        )

    def _link(self, thread_id: int, memories: Sequence[int]) -> None:
        self.db.executemany(
            "INSERT INTO thread_memories(thread_id, narrative_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(thread_id, m) for m in memories],
        )

    # -- reads -------------------------------------------------------------------------------
    def select(self, status: str | None = "open", limit: int = 50) -> list[Thread]:
        """Threads, most recently touched first; `status` None: all of them."""
        if status is not None and status not in STATUSES:
            raise InvalidInput(f"thread status {status!r} is unknown; use one of {list(STATUSES)}")
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM threads WHERE CAST(? AS TEXT) IS NULL OR status = ?"
            " ORDER BY touched_at DESC, id DESC LIMIT ?",
            (status, status, limit),
        )
        return self._with_memories(rows)

    def require(self, thread_id: int) -> Thread:
        rows = (
            self.db.rows(f"SELECT {_COLUMNS} FROM threads WHERE id = ?", (thread_id,))
            if storable(thread_id)
            else []
        )
        if not rows:
            raise NotFound(f"thread {thread_id} does not exist; list them with memory_threads")
        return self._with_memories(rows)[0]

    def _with_memories(self, rows: list[dict[str, Any]]) -> list[Thread]:
        """The rows as threads, with their memories read in one query (T3 lists up to ten at
        every session start)."""
        ids = [r["id"] for r in rows]
        mems: dict[int, list[int]] = {}
        if ids:
            marks = ",".join("?" * len(ids))
            for tid, nid in self.db.execute(
                f"SELECT thread_id, narrative_id FROM thread_memories WHERE thread_id IN ({marks})"
                " ORDER BY thread_id, narrative_id",
                ids,
            ):
                mems.setdefault(tid, []).append(nid)
        for r in rows:
            r["notes"] = json.loads(r["notes"])
        return [Thread(**r, memories=mems.get(r["id"], [])) for r in rows]
