"""Raw context: sessions and turns, kept whole, deduplicated by content hash.

A turn's hash covers (session key, role, speaker, the timestamp the caller gave, the caller's
external id, text). So a retried `sync_turn` or a re-imported file adds nothing, while the same
words said again later (a different timestamp or id) are a new turn. A caller that sends neither
timestamp nor id gets content-only deduplication within the session.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tideline.errors import InvalidInput, NotFound
from tideline.memory._schema import TURN_INDEX
from tideline.memory._time import now, parse_time
from tideline.memory._types import TraceTurn, Turn
from tideline.search import TextIndex
from tideline.store import Database

MAX_TURN_CHARS = 100_000
MAX_SESSION_KEY = 200
_ROLE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class NewTurn:
    """A turn as importers and `sync_turn` hand it over (not yet validated)."""

    role: str
    text: str
    speaker: str | None = None
    timestamp: str | None = None
    external_id: str | None = None


def _turn_hash(session: str, t: NewTurn, ts_given: str | None) -> str:
    parts = [session, t.role, t.speaker or "", ts_given or "", t.external_id or "", t.text]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def index_text(speaker: str | None, text: str) -> str:
    """What search and the embedder see of a turn: the speaker's name, then the words.

    Questions about a conversation name people ("When did Caroline…"); with the name in the
    passage the bundled e5 finds LoCoMo evidence turns 2.6× as often (recall@5 0.18 → 0.46,
    docs/benchmarks.md).
    """
    return f"{speaker}: {text}" if speaker else text


def validate_session_key(session: str) -> str:
    key = (session or "").strip()
    if not key:
        raise InvalidInput(
            "session is empty; pass a stable id for the conversation, e.g. 'chat-2026-11-30'"
        )
    if len(key) > MAX_SESSION_KEY:
        raise InvalidInput(f"session id is {len(key)} characters; the limit is {MAX_SESSION_KEY}")
    return key


def validate_turn(t: NewTurn) -> NewTurn:
    role = (t.role or "").strip().lower()
    if not _ROLE.match(role):
        raise InvalidInput(
            f"role={t.role!r} is not a role name; use user, assistant, system or tool"
        )
    text = t.text if isinstance(t.text, str) else ""
    if not text.strip():
        raise InvalidInput("turn text is empty; send the message's text")
    if len(text) > MAX_TURN_CHARS:
        raise InvalidInput(
            f"turn text is {len(text):,} characters; the limit is {MAX_TURN_CHARS:,} — split it into several turns"
        )
    speaker = (t.speaker or "").strip() or None
    return NewTurn(role, text, speaker, t.timestamp, (t.external_id or None))


_TURN_COLUMNS = (
    "t.id, t.session_id, s.key AS session, t.seq, t.role, t.speaker, t.text, t.ts, t.external_id"
)


def _turn(row: dict[str, Any]) -> Turn:
    return Turn(**row)


class RawContext:
    """Sessions and turns of one agent database."""

    def __init__(self, db: Database):
        self.db = db
        self.index = TextIndex(db, TURN_INDEX)

    def _session_id(self, key: str, source: str, title: str | None = None) -> int:
        row = self.db.one("SELECT id FROM sessions WHERE key = ?", (key,))
        if row:
            return int(row["id"])
        self.db.execute(
            "INSERT INTO sessions(key, source, title, created_at) VALUES (?, ?, ?, ?)",
            (key, source, title, now()),
        )
        return int(self.db.conn.last_insert_rowid())

    def add_turns(
        self,
        session: str,
        turns: Sequence[NewTurn],
        *,
        source: str = "sync",
        title: str | None = None,
    ) -> tuple[list[tuple[int, bool]], list[tuple[int, str]]]:
        """Store turns in one transaction. Returns [(id, created)] per turn and the new (id, text)s."""
        key = validate_session_key(session)
        checked = [validate_turn(t) for t in turns]
        stamps = [parse_time(t.timestamp, "timestamp") for t in checked]
        results: list[tuple[int, bool]] = []
        new: list[tuple[int, str]] = []
        with self.db.transaction():
            sid = self._session_id(key, source, title)
            seq = int(
                self.db.scalar(
                    "SELECT coalesce(max(seq), 0) FROM turns WHERE session_id = ?", (sid,)
                )
            )
            for t, ts in zip(checked, stamps, strict=True):
                digest = _turn_hash(key, t, ts)
                found = self.db.one("SELECT id FROM turns WHERE hash = ?", (digest,))
                if found:
                    results.append((int(found["id"]), False))
                    continue
                seq += 1
                self.db.execute(
                    "INSERT INTO turns(session_id, seq, role, speaker, text, ts, hash, external_id, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        sid,
                        seq,
                        t.role,
                        t.speaker,
                        t.text,
                        ts or now(),
                        digest,
                        t.external_id,
                        now(),
                    ),
                )
                tid = int(self.db.conn.last_insert_rowid())
                results.append((tid, True))
                new.append((tid, index_text(t.speaker, t.text)))
            if new:
                self.db.execute(
                    "UPDATE sessions SET started_at = (SELECT min(ts) FROM turns WHERE session_id = ?),"
                    " ended_at = (SELECT max(ts) FROM turns WHERE session_id = ?) WHERE id = ?",
                    (sid, sid, sid),
                )
                self.index.upsert_many(new)
        return results, new

    def get(self, ids: Iterable[int]) -> list[Turn]:
        ids = list(ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.rows(
            f"SELECT {_TURN_COLUMNS} FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.id IN ({marks})",
            ids,
        )
        by_id = {r["id"]: _turn(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        """What search sees of these turns, by id (for keyword checks)."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT id, speaker, text FROM turns WHERE id IN ({marks})", list(ids)
        )
        return {i: index_text(speaker, text) for i, speaker, text in rows}

    def require(self, ids: Iterable[int]) -> list[int]:
        """The ids, deduplicated in order; `NotFound` naming the first unknown one."""
        wanted = list(dict.fromkeys(int(i) for i in ids))
        known = {t.id for t in self.get(wanted)}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise NotFound(
                f"turn {missing[0]} does not exist"
                + (f" (nor {len(missing) - 1} more)" if len(missing) > 1 else "")
                + "; find turn ids with memory_search(include_turns=true) or `tideline search --turns`"
            )
        return wanted

    def windows(self, turn_ids: Sequence[int], window: int) -> list[list[TraceTurn]]:
        """Each source turn with `window` neighbours on each side; overlapping windows merge."""
        sources = set(turn_ids)
        spans: dict[int, list[tuple[int, int]]] = {}
        for t in self.get(turn_ids):
            spans.setdefault(t.session_id, []).append((t.seq - window, t.seq + window))
        out: list[list[TraceTurn]] = []
        for sid, ranges in spans.items():
            merged: list[list[int]] = []
            for lo, hi in sorted(ranges):
                if merged and lo <= merged[-1][1] + 1:
                    merged[-1][1] = max(merged[-1][1], hi)
                else:
                    merged.append([lo, hi])
            for lo, hi in merged:
                rows = self.db.rows(
                    f"SELECT {_TURN_COLUMNS} FROM turns t JOIN sessions s ON s.id = t.session_id"
                    " WHERE t.session_id = ? AND t.seq BETWEEN ? AND ? ORDER BY t.seq",
                    (sid, lo, hi),
                )
                out.append([TraceTurn(_turn(r), r["id"] in sources) for r in rows])
        return out

    def sessions(self, limit: int = 50) -> list[dict[str, Any]]:
        return self.db.rows(
            "SELECT s.id, s.key, s.source, s.title, s.started_at, s.ended_at,"
            " (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turns"
            " FROM sessions s ORDER BY coalesce(s.ended_at, s.created_at) DESC, s.id DESC LIMIT ?",
            (limit,),
        )

    def recent(self, limit: int = 10, session: str | None = None) -> list[Turn]:
        """The last turns of a session (default: the most recent one), oldest first."""
        if session is None:
            row = self.db.one(
                "SELECT key FROM sessions ORDER BY coalesce(ended_at, created_at) DESC, id DESC LIMIT 1"
            )
            if row is None:
                return []
            session = row["key"]
        rows = self.db.rows(
            f"SELECT {_TURN_COLUMNS} FROM turns t JOIN sessions s ON s.id = t.session_id"
            " WHERE s.key = ? ORDER BY t.seq DESC LIMIT ?",
            (session, limit),
        )
        return [_turn(r) for r in reversed(rows)]

    def heads(self) -> dict[int, int]:
        """Each session's last turn id (the Sleep pipeline compares it with what it digested)."""
        rows = self.db.execute("SELECT session_id, max(id) FROM turns GROUP BY session_id")
        return {int(s): int(t) for s, t in rows}

    def session_turns(self, session_id: int, after_id: int = 0) -> list[Turn]:
        """A session's turns with ids above `after_id`, in order."""
        rows = self.db.rows(
            f"SELECT {_TURN_COLUMNS} FROM turns t JOIN sessions s ON s.id = t.session_id"
            " WHERE t.session_id = ? AND t.id > ? ORDER BY t.seq",
            (session_id, after_id),
        )
        return [_turn(r) for r in rows]

    def session_id(self, key: str) -> int | None:
        return self.db.scalar("SELECT id FROM sessions WHERE key = ?", (key,))

    def unembedded(self, limit: int = 100_000) -> list[tuple[int, str]]:
        """(id, text as search sees it) of turns without a vector."""
        missing = f" WHERE {self.index.pending_filter()}"
        rows = self.db.execute(
            f"SELECT id, speaker, text FROM turns{missing} ORDER BY id LIMIT ?", (limit,)
        )
        return [(i, index_text(speaker, text)) for i, speaker, text in rows]
