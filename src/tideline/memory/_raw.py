"""Raw context: sessions and turns, kept whole, deduplicated by content hash.

A turn's hash covers (session key, role, speaker, the timestamp the caller gave, the caller's
external id, text). So a retried `sync_turn` or a re-imported file adds nothing, while the same
words said again later (a different timestamp or id) are a new turn. A caller that sends neither
timestamp nor id gets content-only deduplication within the session.

`RawContext` owns the `sessions` and `turns` tables: it creates them (`create_tables`, called by the
agent migrations) and is the only module with SQL on them; other packages call its methods.
Invariants: `turns.hash` is unique; turns are ordered inside a session by `seq`; timestamps are
UTC ISO-8601 strings `YYYY-MM-DDTHH:MM:SSZ`, so they sort as text.

Forgetting leaves a tombstone in place (`forget_turns`, `forget_session`): the row keeps its id,
session, position, role and time, and gains `forgotten_at` / `forgotten_why`; its text, speaker,
external id and search rows are erased, and its hash becomes random, so nothing of the words can
be recovered or confirmed. Source links and trace windows keep working and read "[forgotten]".
Reads by id (`get`, `windows`) return tombstones marked; everything else (recent turns, a
session's turns, counts, vector filling) leaves them out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tideline.clock import Clock, now_text, parse_time
from tideline.errors import InvalidInput, NotFound
from tideline.memory._owner import pending_ids, scope, unforgotten
from tideline.memory._results import FORGOTTEN, TraceTurn, Turn
from tideline.search import DEFAULT_ANALYSER, Analyser, Scope, create_index, open_index, valid_text
from tideline.store import Storage, id_lists, in_lists, storable_ids, time_range

TURN_INDEX = "turn_text"
#: Neighbouring turns on each side that join a turn's lexical key (see `lexical_keys`).
TURN_CONTEXT = 2
MAX_TURN_CHARS = 100_000
MAX_SESSION_KEY = 200
_LIVE = "t.forgotten_at IS NULL"
#: Turns per INSERT statement (11 parameters each: well inside both engines' limits).
_INSERT_ROWS = 200
_ROLE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class Exchange:
    """What a turn starts (`RawContext.exchanges_of`): the turn that answers it, when it asks;
    the question about it and its speaker's reply, when it was asked about."""

    answer: int | None
    reply: tuple[int, int] | None


class TurnRow:
    """A turn with what a turn search asks around it (`RawContext.rows_of`), made from the
    row only when asked (a search reads ~100 rows and uses a few of each): the `Turn`, its
    words as stored (`said`, a tombstone's too), its live neighbours, its exchange."""

    __slots__ = ("_row", "_turn")

    def __init__(self, row: Sequence[Any]) -> None:
        self._row = row
        self._turn: Turn | None = None

    @property
    def id(self) -> int:
        return int(self._row[0])

    @property
    def session_id(self) -> int:
        return int(self._row[1])

    @property
    def speaker(self) -> str | None:
        return self._row[5]  # type: ignore[no-any-return]

    @property
    def said(self) -> str:
        return str(self._row[6])

    @property
    def live(self) -> bool:
        return self._row[9] is None

    @property
    def turn(self) -> Turn:
        if self._turn is None:
            self._turn = _turn(dict(zip(_TURN_FIELDS, self._row[:_FIELDS], strict=True)))
        return self._turn

    @property
    def neighbours(self) -> list[int]:
        return [int(n) for n in self._row[_FIELDS : _FIELDS + 2] if n is not None]

    @property
    def exchange(self) -> Exchange:
        q, asked, asker, a, replier = self._row[_FIELDS + 1 :]
        return _exchange(self.said, self.speaker, q, asked, asker, a, replier)


def _exchange(
    text: object,
    speaker: object,
    q: object,
    asked: object,
    asker: object,
    a: object,
    replier: object,
) -> Exchange:
    """What a turn (`text`, `speaker`) starts, given the next live turn of its session (`q`,
    its text and speaker) and the one after (`a`, its speaker): see `exchanges_of`."""
    other = q is not None and asker != speaker
    answer = int(str(q)) if other and str(text).rstrip().endswith("?") else None
    reply = (
        (int(str(q)), int(str(a)))
        if other
        and a is not None
        and asker is not None
        and replier == speaker
        and "?" in str(asked)
        else None
    )
    return Exchange(answer, reply)


@dataclass(frozen=True)
class NewTurn:
    """A turn as importers and `sync_turn` hand it over (not yet validated)."""

    role: str
    text: str
    speaker: str | None = None
    timestamp: str | None = None
    external_id: str | None = None
    #: The stored hash, from a Tideline export: restoring a backup twice adds nothing.
    digest: str | None = None
    #: (when, why) of a tombstone restored from a Tideline export; it has no text.
    forgotten: tuple[str, str | None] | None = None


def _turn_hash(session: str, t: NewTurn, ts_given: str | None) -> str:
    if t.digest:
        return t.digest
    parts = [session, t.role, t.speaker or "", ts_given or "", t.external_id or "", t.text]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def index_text(speaker: str | None, text: str) -> str:
    """What search and the embedder see of a turn: the speaker's name, then the words.

    Questions about a conversation name people ("When did Caroline…"); with the name in the
    passage the bundled e5 finds LoCoMo evidence turns 2.6× as often (recall@5 0.18 → 0.46,
    docs/benchmarks.md).
    """
    return f"{speaker}: {text}" if speaker else text


def spelled_day(ts: str) -> str:
    """'2023-05-08T13:56:00Z' → '8 May 2023': the words a question uses for a date."""
    day = dt.date.fromisoformat(ts[:10])
    return f"{day.day} {day:%B %Y}"


def validate_session_key(session: str) -> str:
    key = valid_text(session if isinstance(session, str) else "").strip()
    if not key:
        raise InvalidInput(
            "session is empty; pass a stable id for the conversation, e.g. 'chat-2026-11-30'"
        )
    if len(key) > MAX_SESSION_KEY:
        raise InvalidInput(f"session id is {len(key)} characters; the limit is {MAX_SESSION_KEY}")
    return key


def _optional_text(name: str, value: object) -> str | None:
    """A speaker or external id: text (an importer may hand over a number), or None."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise InvalidInput(f"{name}={value!r} must be text; send a name or an id as a string")
    return valid_text(value)


def validate_turn(t: NewTurn) -> NewTurn:
    """A turn fit to store: a role name, non-empty text within the limit, text-only fields.

    Lone surrogates become U+FFFD, as the importers replace undecodable bytes: the turn is kept.
    """
    role = (t.role if isinstance(t.role, str) else "").strip().lower()
    if not _ROLE.match(role):
        raise InvalidInput(
            f"role={t.role!r} is not a role name; use user, assistant, system or tool"
        )
    if t.forgotten is not None:
        if not t.digest:
            raise InvalidInput("a forgotten turn needs its hash; restore it from a Tideline export")
        return NewTurn(role, "", None, t.timestamp, None, t.digest, t.forgotten)
    text = valid_text(t.text) if isinstance(t.text, str) else ""
    if not text.strip():
        raise InvalidInput("turn text is empty; send the message's text")
    if len(text) > MAX_TURN_CHARS:
        raise InvalidInput(
            f"turn text is {len(text):,} characters; the limit is {MAX_TURN_CHARS:,} — split it into several turns"
        )
    speaker = (_optional_text("speaker", t.speaker) or "").strip() or None
    digest = _optional_text("digest", t.digest)
    return NewTurn(
        role, text, speaker, t.timestamp, _optional_text("external_id", t.external_id), digest
    )


def usable_turns(
    session: str, turns: Sequence[NewTurn]
) -> tuple[list[NewTurn], list[tuple[int, InvalidInput]]]:
    """The turns `add_turns` would accept, and (1-based position, error) for each it would not:
    an importer keeps a file's good turns and reports the rest instead of failing the file."""
    try:
        validate_session_key(session)
    except InvalidInput as exc:
        return [], [(0, exc)]
    good: list[NewTurn] = []
    bad: list[tuple[int, InvalidInput]] = []
    for position, t in enumerate(turns, 1):
        try:
            parse_time(validate_turn(t).timestamp, "timestamp")
        except InvalidInput as exc:
            bad.append((position, exc))
        else:
            good.append(t)
    return good, bad


def dated_by_neighbours(
    session: str, turns: Sequence[NewTurn], fallback: str | None = None
) -> tuple[list[NewTurn], int]:
    """Imported turns without a time of their own, dated by the nearest dated turn before them
    in the conversation (after them, for the first ones), else by `fallback` (the
    conversation's time); and how many had neither. Left undated, `add_turns` would date them
    at import time, and the newest of them would become the "today" that time words in
    questions are read against. A dated turn keeps the hash it had undated, so re-importing a
    file imported before adds nothing."""
    key = validate_session_key(session)
    stamps = [parse_time(t.timestamp, "timestamp") for t in turns]
    before: list[str | None] = []
    last = None
    for ts in stamps:
        last = ts or last
        before.append(last)
    after: list[str | None] = []
    last = None
    for ts in reversed(stamps):
        last = ts or last
        after.append(last)
    after.reverse()
    fallback = parse_time(fallback, "created_at")
    dated: list[NewTurn] = []
    unknown = 0
    for t, ts, prev, nxt in zip(turns, stamps, before, after, strict=True):
        when = ts or prev or nxt or fallback
        if ts is None and when is not None:
            digest = _turn_hash(key, validate_turn(t), None)
            t = replace(t, timestamp=when, digest=digest)
        unknown += when is None
        dated.append(t)
    return dated, unknown


_TURN_COLUMNS = (
    "t.id, t.session_id, s.key AS session, t.seq, t.role, t.speaker, t.text, t.ts, t.external_id,"
    " t.forgotten_at, t.forgotten_why"
)


#: The fields of a `Turn`, in `_TURN_COLUMNS`' order.
_TURN_FIELDS = (
    "id",
    "session_id",
    "session",
    "seq",
    "role",
    "speaker",
    "text",
    "ts",
    "external_id",
    "forgotten_at",
    "forgotten_why",
)
_FIELDS = len(_TURN_FIELDS)


def _turn(row: dict[str, Any]) -> Turn:
    if row["forgotten_at"]:
        row["text"] = FORGOTTEN
    return Turn(**row)


class RawContext:
    """Sessions and turns of one agent database."""

    def __init__(
        self,
        db: Storage,
        analyser: Analyser = DEFAULT_ANALYSER,
        context: int = TURN_CONTEXT,
        *,
        clock: Clock,
    ):
        self.db = db
        self.clock = clock
        self.context = max(0, int(context))
        keys = f"ctx{self.context}" if self.context else ""
        self.index = open_index(db, TURN_INDEX, analyser, keys)
        self.index.lexical_source(self.lexical_keys, self.ids)
        if self.index.stale:  # made by another analyser or keys: cut every turn anew, once
            self.index.reanalyse(self.lexical_keys(self.ids()).items())

    @staticmethod
    def create_tables(db: Storage) -> None:
        """The raw-context tables (agent migration 1)."""
        db.execute(
            """CREATE TABLE sessions(
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL DEFAULT 'sync',
            title TEXT,
            started_at TEXT,
            ended_at TEXT,
            created_at TEXT NOT NULL)"""
        )
        db.execute(
            """CREATE TABLE turns(
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            speaker TEXT,
            text TEXT NOT NULL,
            ts TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE,
            external_id TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (session_id, seq))"""
        )
        db.execute("CREATE INDEX turns_ts ON turns(ts)")
        db.execute("CREATE INDEX turns_external ON turns(external_id)")
        create_index(db, TURN_INDEX)

    @staticmethod
    def add_tombstones(db: Storage) -> None:
        """When and why a turn or a session was forgotten (agent migration 3)."""
        for table in ("sessions", "turns"):
            db.execute(f"ALTER TABLE {table} ADD COLUMN forgotten_at TEXT")
            db.execute(f"ALTER TABLE {table} ADD COLUMN forgotten_why TEXT")

    def _session_id(
        self, key: str, source: str, title: str | None = None, created_at: str | None = None
    ) -> int:
        row = self.db.one("SELECT id FROM sessions WHERE key = ?", (key,))
        if row:
            return int(row["id"])
        return int(
            self.db.scalar(
                "INSERT INTO sessions(key, source, title, created_at) VALUES (?, ?, ?, ?)"
                " RETURNING id",
                (key, source, title, created_at or now_text(self.clock)),
            )
        )

    def add_turns(
        self,
        session: str,
        turns: Sequence[NewTurn],
        *,
        source: str = "sync",
        title: str | None = None,
        created_at: str | None = None,
    ) -> tuple[list[tuple[int, bool]], list[tuple[int, str]], int]:
        """Store turns in one transaction. Returns [(id, created)] per turn, the new (id, text)s
        and the session's id. `created_at` dates a new session (a restored backup's)."""
        key = validate_session_key(session)
        created_at = parse_time(created_at, "created_at")
        checked = [validate_turn(t) for t in turns]
        stamps = [parse_time(t.timestamp, "timestamp") for t in checked]
        results: list[tuple[int, bool]] = []
        new: list[tuple[int, str]] = []
        with self.db.transaction():
            self.db.lock(f"session:{key}")  # another process's writer of this session waits
            sid = self._session_id(key, source, title, created_at)
            seq = int(
                self.db.scalar(
                    "SELECT coalesce(max(seq), 0) FROM turns WHERE session_id = ?", (sid,)
                )
            )
            digests = [_turn_hash(key, t, ts) for t, ts in zip(checked, stamps, strict=True)]
            known = self.ids_by_hash(digests)
            rows: list[tuple[object, ...]] = []
            for t, ts, digest in zip(checked, stamps, digests, strict=True):
                if digest in known:
                    continue
                seq += 1
                known[digest] = -seq  # new: its id comes back from the insert, by seq
                when, why = t.forgotten or (None, None)
                row = (
                    sid,
                    seq,
                    t.role,
                    t.speaker,
                    t.text,
                    ts or now_text(self.clock),
                    digest,
                    t.external_id,
                )
                rows.append((*row, now_text(self.clock), when, why))
            by_seq = self._insert_turns(rows)
            for t, digest in zip(checked, digests, strict=True):
                tid = known[digest]
                if tid < 0:  # the first of its words in this call: stored now
                    tid = known[digest] = by_seq[-tid]
                    results.append((tid, True))
                    if t.forgotten is None:
                        new.append((tid, index_text(t.speaker, t.text)))
                else:
                    results.append((tid, False))
            if any(created for _, created in results):
                self.db.execute(
                    "UPDATE sessions SET started_at = (SELECT min(ts) FROM turns WHERE session_id = ?),"
                    " ended_at = (SELECT max(ts) FROM turns WHERE session_id = ?) WHERE id = ?",
                    (sid, sid, sid),
                )
                # the turn before the first new one gains a neighbour: its key changes too
                changed = [i for i, _ in new] + self._before(sid, new[0][0])
                keys = self.lexical_keys(changed)
                texts = self.texts(changed)
                self.index.upsert_many([(i, texts[i]) for i in changed if i in texts], keys)
        return results, new, sid

    def _insert_turns(self, rows: Sequence[tuple[object, ...]]) -> dict[int, int]:
        """Insert turn rows, several to a statement (a round trip per turn made a PostgreSQL
        load a quarter of SQLite's rate); seq → the new id (`seq` is unique in a session)."""
        out: dict[int, int] = {}
        for at in range(0, len(rows), _INSERT_ROWS):
            part = rows[at : at + _INSERT_ROWS]
            values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(part))
            found = self.db.execute(
                "INSERT INTO turns(session_id, seq, role, speaker, text, ts, hash, external_id,"
                f" created_at, forgotten_at, forgotten_why) VALUES {values} RETURNING id, seq",
                [v for row in part for v in row],
            )
            out.update((int(s), int(i)) for i, s in found)
        return out

    def get(self, ids: Iterable[int]) -> list[Turn]:
        ids = storable_ids(ids)
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
        """What search and the embedder see of these turns, by id (a forgotten turn: nothing)."""
        out: dict[int, str] = {}
        for marks, part in id_lists(ids):
            rows = self.db.execute(
                f"SELECT t.id, t.speaker, t.text FROM turns t WHERE t.id IN ({marks}) AND {_LIVE}",
                part,
            )
            out.update((i, index_text(speaker, text)) for i, speaker, text in rows)
        return out

    def _before(self, session_id: int, turn_id: int) -> list[int]:
        if not self.context:
            return []
        rows = self.db.execute(
            "SELECT p.id FROM turns t JOIN turns p ON p.session_id = t.session_id"
            " AND p.seq BETWEEN t.seq - ? AND t.seq - 1 WHERE t.id = ? AND t.session_id = ?",
            (self.context, turn_id, session_id),
        )
        return [int(r[0]) for r in rows]

    def lexical_keys(self, ids: Sequence[int]) -> dict[int, str]:
        """What BM25 sees of each turn: its session day spelled out, its own words, then its
        `context` neighbours on each side (LoCoMo: a turn alone often lacks its question's
        words, "Yeah, I painted that lake sunrise" answers "Did you paint it?"; lexical recall
        @10 0.616 → 0.72, docs/benchmarks.md). Vectors and keyword checks keep the turn alone."""
        texts = self.texts(ids)
        if not self.context:
            return texts
        out: dict[int, str] = {}
        w = self.context
        for marks, part in id_lists(ids):
            rows = self.db.execute(
                "SELECT t.id, t.ts, n.speaker, n.text, n.seq - t.seq FROM turns t"
                " JOIN turns n ON n.session_id = t.session_id AND n.seq BETWEEN t.seq - ? AND t.seq + ?"
                f" AND n.id != t.id AND n.forgotten_at IS NULL WHERE t.id IN ({marks})"
                " ORDER BY t.id, n.seq",
                (w, w, *part),
            )
            near: dict[int, list[str]] = {}
            days: dict[int, str] = {}
            for i, ts, speaker, text, _ in rows:
                near.setdefault(i, []).append(index_text(speaker, text))
                days[i] = ts
            for i in part:
                if i in texts:
                    day = days.get(i) or self._ts(i)
                    head = f"{spelled_day(day)}. " if day else ""
                    out[i] = head + " ".join([texts[i], *near.get(i, [])])
        return out

    def _ts(self, turn_id: int) -> str | None:
        found = self.db.scalar("SELECT ts FROM turns WHERE id = ?", (turn_id,))
        return None if found is None else str(found)

    def speakers_of(self, ids: Sequence[int]) -> dict[int, str]:
        """Each turn's speaker, for the turns that name one (the speaker lever)."""
        return {i: str(s) for i, s in self._column_of(ids, "speaker").items() if s is not None}

    def exchanges_of(self, ids: Sequence[int]) -> dict[int, Exchange]:
        """What each of these turns starts: the answer, when it asks (its text ends in "?") and
        the next turn of its session is someone else's (the answer lever); the question and
        the reply, when the next turn is someone else's asking about it ("?" in its text) and
        the one after is its own speaker's (the reply lever). One statement for both."""
        out: dict[int, Exchange] = {}
        for marks, part in id_lists(ids):
            rows = self.db.execute(
                "SELECT s.id, s.text, s.speaker, q.id, q.text, q.speaker, a.id, a.speaker"
                " FROM turns s"
                " LEFT JOIN turns q ON q.session_id = s.session_id AND q.seq = s.seq + 1"
                "  AND q.forgotten_at IS NULL"
                " LEFT JOIN turns a ON a.session_id = s.session_id AND a.seq = s.seq + 2"
                f"  AND a.forgotten_at IS NULL WHERE s.id IN ({marks})",
                part,
            )
            for s, text, speaker, q, asked, asker, a, replier in rows:
                out[int(s)] = _exchange(text, speaker, q, asked, asker, a, replier)
        return out

    def rows_of(self, ids: Iterable[int]) -> dict[int, TurnRow]:
        """Each of these turns, and the next live turn of each (the answer the answer lever may
        bring in), with its live neighbours and its exchange — what `get`, `texts`,
        `speakers_of`, `sessions_of`, `neighbours_of` and `exchanges_of` say of it — in one
        statement (per `IN` list): a turn search asks them all of its candidates, each a
        statement that waits on a PostgreSQL server (issue 34; `TurnRows` keeps the answer for
        the search)."""
        out: dict[int, TurnRow] = {}
        for marks, part in id_lists(storable_ids(ids)):
            rows = self.db.execute(
                f"WITH wanted AS (SELECT id FROM turns WHERE id IN ({marks}) UNION"
                " SELECT n.id FROM turns w JOIN turns n ON n.session_id = w.session_id"
                f" AND n.seq = w.seq + 1 AND n.forgotten_at IS NULL WHERE w.id IN ({marks}))"
                f" SELECT {_TURN_COLUMNS}, p.id, q.id, q.text, q.speaker, a.id, a.speaker"
                " FROM turns t JOIN sessions s ON s.id = t.session_id"
                " LEFT JOIN turns p ON p.session_id = t.session_id AND p.seq = t.seq - 1"
                "  AND p.forgotten_at IS NULL"
                " LEFT JOIN turns q ON q.session_id = t.session_id AND q.seq = t.seq + 1"
                "  AND q.forgotten_at IS NULL"
                " LEFT JOIN turns a ON a.session_id = t.session_id AND a.seq = t.seq + 2"
                "  AND a.forgotten_at IS NULL WHERE t.id IN (SELECT id FROM wanted)",
                [*part, *part],
            ).fetchall()
            out.update((int(row[0]), TurnRow(row)) for row in rows)
        return out

    def neighbours_of(self, ids: Sequence[int]) -> dict[int, list[int]]:
        """Each of these turns' previous and next turns in its session, those not forgotten
        (the neighbours lever reads their stored vectors)."""
        out: dict[int, list[int]] = {}
        for marks, part in id_lists(ids):
            rows = self.db.execute(
                "SELECT q.id, t.id FROM turns q JOIN turns t ON t.session_id = q.session_id"
                f" AND t.seq IN (q.seq - 1, q.seq + 1) AND {_LIVE} WHERE q.id IN ({marks})",
                part,
            )
            for q, t in rows:
                out.setdefault(int(q), []).append(int(t))
        return out

    def sessions_of(self, ids: Sequence[int]) -> dict[int, int]:
        """Each turn's session id (search keeps one session from filling a top k)."""
        return {i: int(s) for i, s in self._column_of(ids, "session_id").items()}

    def _column_of(self, ids: Sequence[int], column: str) -> dict[int, Any]:
        """One column of these turns, by id (`column` is ours, never the caller's input)."""
        out: dict[int, Any] = {}
        for marks, part in id_lists(ids):
            rows = self.db.execute(f"SELECT id, {column} FROM turns WHERE id IN ({marks})", part)
            out.update((int(i), value) for i, value in rows)
        return out

    def require(self, ids: Iterable[int]) -> list[int]:
        """The ids, deduplicated in order; `NotFound` naming the first unknown one."""
        wanted = list(dict.fromkeys(int(i) for i in ids))
        known = {t.id for t in self.get(wanted)}
        missing = [i for i in wanted if i not in known]
        if missing:
            raise NotFound(
                f"turn {missing[0]} does not exist"
                + (f" (nor {len(missing) - 1} more)" if len(missing) > 1 else "")
                + "; find turn ids with memory_search or `tideline search`"
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
        """The sessions not forgotten, most recent first, with their turns still remembered."""
        return self.db.rows(
            "SELECT s.id, s.key, s.source, s.title, s.started_at, s.ended_at,"
            f" (SELECT count(*) FROM turns t WHERE t.session_id = s.id AND {_LIVE}) AS turns"
            " FROM sessions s WHERE s.forgotten_at IS NULL"
            " ORDER BY coalesce(s.ended_at, s.created_at) DESC, s.id DESC LIMIT ?",
            (limit,),
        )

    def recent(self, limit: int = 10, session: str | None = None) -> list[Turn]:
        """The last turns of a session (default: the most recent one), oldest first."""
        if session is None:
            row = self.db.one(
                "SELECT key FROM sessions WHERE forgotten_at IS NULL"
                " ORDER BY coalesce(ended_at, created_at) DESC, id DESC LIMIT 1"
            )
            if row is None:
                return []
            session = row["key"]
        rows = self.db.rows(
            f"SELECT {_TURN_COLUMNS} FROM turns t JOIN sessions s ON s.id = t.session_id"
            f" WHERE s.key = ? AND {_LIVE} ORDER BY t.seq DESC LIMIT ?",
            (session, limit),
        )
        return [_turn(r) for r in reversed(rows)]

    def heads(self) -> dict[int, int]:
        """Each session's last turn id (the Sleep pipeline compares it with what it digested)."""
        rows = self.db.execute("SELECT session_id, max(id) FROM turns GROUP BY session_id")
        return {int(s): int(t) for s, t in rows}

    @staticmethod
    def session_filter(session_id: int, exclude: Sequence[int] = ()) -> tuple[str, list[object]]:
        """A search filter for one session's turns, leaving out `exclude`."""
        skip = [int(i) for i in exclude] or [0]
        marks = ",".join("?" * len(skip))
        where = f"rowid IN (SELECT id FROM turns WHERE session_id = ? AND id NOT IN ({marks}))"
        return where, [session_id, *skip]

    def session_id(self, key: str) -> int | None:
        found = self.db.scalar("SELECT id FROM sessions WHERE key = ?", (key,))
        return None if found is None else int(found)

    def filter(self, since: str | None, until: str | None) -> Scope:
        """Search scope over the turns said between `since` and `until` (inclusive)."""
        return scope(self.index, "turns", *time_range("ts", since, until))

    def counts(self) -> dict[str, int]:
        return {
            "sessions": int(
                self.db.scalar("SELECT count(*) FROM sessions WHERE forgotten_at IS NULL")
            ),
            "turns": int(self.db.scalar("SELECT count(*) FROM turns WHERE forgotten_at IS NULL")),
            "forgotten_turns": int(
                self.db.scalar("SELECT count(*) FROM turns WHERE forgotten_at IS NOT NULL")
            ),
        }

    def texts_without_vectors(self, limit: int | None = None) -> list[tuple[int, str]]:
        """(id, text as search sees it) of the oldest `limit` (None: all) turns without a vector."""
        return self._texts(pending_ids(self.ids(), self.index, limit))

    def ids(self) -> list[int]:
        """Every turn id not forgotten, ascending (what the index should hold)."""
        return [
            r[0]
            for r in self.db.execute("SELECT id FROM turns WHERE forgotten_at IS NULL ORDER BY id")
        ]

    def _texts(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        found = self.texts(ids)
        return [(i, found[i]) for i in ids if i in found]

    def latest_day(self) -> str | None:
        """The UTC day (YYYY-MM-DD) of the latest turn, or None before the first."""
        # down `turns_ts` to the newest kept turn (max(ts) with a WHERE reads every turn)
        latest = self.db.scalar(
            "SELECT ts FROM turns WHERE forgotten_at IS NULL ORDER BY ts DESC LIMIT 1"
        )
        return str(latest)[:10] if latest else None

    def sessions_between(self, start: str, end: str) -> list[int]:
        """Ids of the sessions with a turn at `start` <= ts < `end`, the latest such turn first."""
        rows = self.db.execute(
            "SELECT session_id FROM turns WHERE ts >= ? AND ts < ? AND forgotten_at IS NULL"
            " GROUP BY session_id ORDER BY max(ts) DESC, max(id) DESC",
            (start, end),
        )
        return [int(r[0]) for r in rows]

    def session_turns(self, session_id: int, after_id: int = 0) -> list[Turn]:
        """A session's turns with ids above `after_id` (0: all), in order."""
        rows = self.db.rows(
            f"SELECT {_TURN_COLUMNS} FROM turns t JOIN sessions s ON s.id = t.session_id"
            f" WHERE t.session_id = ? AND t.id > ? AND {_LIVE} ORDER BY t.seq",
            (session_id, after_id),
        )
        return [_turn(r) for r in rows]

    def turns_after(self, cutoff: str | None) -> list[Turn]:
        """Turns newer than `cutoff` (None: all), by time, then session and position."""
        rows = self.db.rows(
            f"SELECT {_TURN_COLUMNS} FROM turns t JOIN sessions s ON s.id = t.session_id"
            f" WHERE (CAST(? AS TEXT) IS NULL OR t.ts > ?) AND {_LIVE} ORDER BY t.ts, t.session_id, t.seq",
            (cutoff, cutoff),
        )
        return [_turn(r) for r in rows]

    # -- forgetting ----------------------------------------------------------------------------
    def live_turn_ids(self, session_id: int) -> list[int]:
        """The ids of a session's turns not forgotten yet, in order."""
        rows = self.db.execute(
            "SELECT id FROM turns WHERE session_id = ? AND forgotten_at IS NULL ORDER BY seq",
            (session_id,),
        )
        return [int(r[0]) for r in rows]

    def live_session(self, key: str) -> dict[str, Any] | None:
        """A session not forgotten (id, key, title), by its key."""
        return self.db.one(
            "SELECT id, key, title FROM sessions WHERE key = ? AND forgotten_at IS NULL", (key,)
        )

    def forget_turns(self, ids: Sequence[int], why: str) -> int:
        """Erase these turns' words and search rows, leaving tombstones; returns how many."""
        when = now_text(self.clock)
        done = 0
        with self.db.transaction():
            for live in unforgotten(self.db, "turns", ids):
                self.db.executemany(
                    "UPDATE turns SET text = '', speaker = NULL, external_id = NULL, hash = ?,"
                    " forgotten_at = ?, forgotten_why = ? WHERE id = ?",
                    [(_tombstone_hash(), when, why, i) for i in live],
                )
                self.index.delete(live)
                self._rekey_neighbours(live)
                done += len(live)
        return done

    def _rekey_neighbours(self, forgotten: Sequence[int]) -> None:
        """A forgotten turn's words leave its neighbours' context keys too (else a search for
        them would still find the turns around it)."""
        if not self.context or not forgotten:
            return
        marks = ",".join("?" * len(forgotten))
        rows = self.db.execute(
            "SELECT DISTINCT n.id FROM turns t JOIN turns n ON n.session_id = t.session_id"
            " AND n.seq BETWEEN t.seq - ? AND t.seq + ? AND n.id != t.id"
            f" WHERE t.id IN ({marks}) AND n.forgotten_at IS NULL",
            (self.context, self.context, *forgotten),
        )
        near = [int(r[0]) for r in rows]
        if near:
            texts = self.texts(near)
            self.index.upsert_many(
                [(i, texts[i]) for i in near if i in texts], self.lexical_keys(near)
            )

    def forget_session(self, session_id: int, why: str) -> int:
        """Forget every turn of a session and its key and title; returns the turns forgotten."""
        with self.db.transaction():
            done = self.forget_turns(self.live_turn_ids(session_id), why)
            self.db.execute(
                "UPDATE sessions SET key = ?, title = NULL, forgotten_at = ?, forgotten_why = ?"
                " WHERE id = ?",
                (f"forgotten/{secrets.token_hex(8)}", now_text(self.clock), why, session_id),
            )
        return done

    def mark_session_forgotten(self, key: str, when: str, why: str | None) -> None:
        """Restore a session tombstone from a Tideline export (its turns come as tombstones)."""
        self.db.execute(
            "UPDATE sessions SET title = NULL, forgotten_at = ?, forgotten_why = ? WHERE key = ?",
            (when, why, key),
        )

    # -- backup --------------------------------------------------------------------------------
    def dump_sessions(self) -> Iterator[dict[str, Any]]:
        """Every session with its turns in order, tombstones included (a Tideline export)."""
        for session in self.db.rows(
            "SELECT id, key, source, title, created_at, forgotten_at, forgotten_why"
            " FROM sessions ORDER BY id"
        ):
            rows = self.db.rows(
                "SELECT id, seq, role, speaker, text, ts, hash, external_id, forgotten_at,"
                " forgotten_why FROM turns WHERE session_id = ? ORDER BY seq",
                (session["id"],),
            )
            yield {**session, "turns": rows}

    def ids_by_hash(self, digests: Sequence[str]) -> dict[str, int]:
        """Turn ids by their stored hash, one query per batch (a sync skips the turns it stored
        already; a restored narrative finds its source turns)."""
        found: dict[str, int] = {}
        for marks, part in in_lists(digests):
            found.update(
                (str(h), int(i))
                for h, i in self.db.execute(
                    f"SELECT hash, id FROM turns WHERE hash IN ({marks})", part
                )
            )
        return found

    def times(self, ids: Sequence[int]) -> dict[int, tuple[int, str]]:
        """Each turn's session id and own timestamp, by id — what the profile needs to count
        sessions and date evidence in valid time, without reading the words."""
        found: dict[int, tuple[int, str]] = {}
        for marks, part in id_lists(storable_ids(ids)):
            found.update(
                (int(i), (int(sid), str(ts)))
                for i, sid, ts in self.db.execute(
                    f"SELECT id, session_id, ts FROM turns WHERE id IN ({marks})", part
                )
            )
        return found

    def hashes(self, ids: Sequence[int]) -> dict[int, str]:
        """The stored hash of these turns, by id (an export names source turns by hash)."""
        return {i: str(h) for i, h in self._column_of(ids, "hash").items()}


def turn_times(db: Storage, ids: Sequence[int]) -> dict[int, str]:
    """When each turn was said (its own timestamp), by id: the valid time of what is learnt from
    it. A function over the database (not the service) so a migration can backfill with it."""
    found: dict[int, str] = {}
    for marks, part in id_lists(ids):
        found.update(
            (int(i), str(ts))
            for i, ts in db.execute(f"SELECT id, ts FROM turns WHERE id IN ({marks})", part)
        )
    return found


def session_span(
    db: Storage, session_id: int, after_id: int, through_id: int
) -> tuple[str, str] | None:
    """The first and last time said of a session's turns with ids in (after_id, through_id]."""
    row = db.one(
        "SELECT min(ts) AS first, max(ts) AS last FROM turns"
        " WHERE session_id = ? AND id > ? AND id <= ?",
        (session_id, after_id, through_id),
    )
    return None if row is None or row["first"] is None else (str(row["first"]), str(row["last"]))


def _tombstone_hash() -> str:
    """A random stand-in for a forgotten turn's hash: unique, and says nothing of the words."""
    return "forgotten:" + secrets.token_hex(16)
