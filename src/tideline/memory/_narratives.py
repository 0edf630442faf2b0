"""Narratives: validation, weights at write time, anti-inflation, tags and source links.

Limits (documented in docs/memory.md): gesture ≤ 500 characters and required; context and
cognition_direction ≤ 8,000 each; ≤ 32 tags of ≤ 64 characters; ≤ 1,000 source links;
entities_role ≤ 2,000 characters in the form `A=role+role; B=role`.

At write time recurrence = how many OTHER narratives share at least one tag, mapped to 1–5 by
`recurrence_from_count`; dreams have importance forced to 1. After the insert the anti-inflation
rule (`deflate_recent`: when the mean weight of the 50 most recent narratives exceeds 0.7, scale
those weights by 0.7 / mean) runs in the same transaction. The rules live in `_weights`.

`Narratives` owns the `narratives`, `narrative_tags` and `narrative_links` tables: it creates them
(`create_tables`, called by the agent migrations) and is the only module with SQL on them; the
script layer and injection call its methods. Tags live both as a JSON array in `narratives.tags`
(for display) and in `narrative_tags` (normalised, for counting and filtering);
`narrative_links` are the source links, narrative → the turns it came from.

A narrative is corrected by writing a new one that `supersedes` it: the old one gets
`superseded_by` and leaves the index (so search and injection never meet it) but stays readable by
id, for trace. Forgetting (`forget`) erases a narrative's texts, tags and index rows and keeps a
tombstone (id, times, weight, links, `forgotten_at` / `forgotten_why`). Only *live* narratives —
neither superseded nor forgotten — count for recurrence, anti-inflation, the script layer and
injection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, cast

from tideline.clock import Clock, from_text, now_text, parse_time
from tideline.errors import InvalidInput, NotFound
from tideline.memory._entities import parse_entities_role
from tideline.memory._owner import pending_ids, scope, unforgotten
from tideline.memory._results import FORGOTTEN, Narrative
from tideline.memory._weights import (
    DEFAULT_CEILING,
    DEFAULT_WINDOW,
    WeightedNarrative,
    check_dimension,
    compute_weight,
    deflate_recent,
    normalise_tag,
    recurrence_from_count,
)
from tideline.search import DEFAULT_ANALYSER, Analyser, Scope, create_index, open_index, valid_text
from tideline.store import Storage, id_lists, storable_ids, time_range

NARRATIVE_INDEX = "narrative_text"
KINDS = ("narrative", "dream", "reflection")
#: The prefetch pool's order (T2): weight band (tenths), then recurring themes, then the newest.
POOL_ORDER = "CAST(weight * 10 AS INTEGER) DESC, recurrence DESC, created_at DESC, id DESC"
MAX_GESTURE = 500
MAX_TEXT = 8_000
MAX_TAGS = 32
MAX_TAG = 64
MAX_LINKS = 1_000
MAX_ENTITIES_ROLE = 2_000
#: The narratives search, injection and the script layer see.
LIVE = "forgotten_at IS NULL AND superseded_by IS NULL"


@dataclass
class NarrativeInput:
    """The fields a caller may send to `memory_write`."""

    gesture: str
    context: str = ""
    cognition_direction: str = ""
    importance: int = 3
    emotional: int = 3
    unresolved: int = 1
    tags: list[str] = field(default_factory=list)
    entities_role: str = ""
    related_entities: list[str] = field(default_factory=list)
    source_links: list[int] = field(default_factory=list)
    kind: str = "narrative"
    created_at: str | None = None
    supersedes: int | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> NarrativeInput:
        """Build from a dict; unknown keys are an error that lists the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidInput(f"unknown field(s) {unknown}; memory_write accepts {sorted(known)}")
        if "gesture" not in data:
            raise InvalidInput(
                "gesture is required: one sentence saying what happened, with its tone"
            )
        return cls(**{k: v for k, v in data.items() if v is not None})

    def validated(self) -> NarrativeInput:
        gesture = _text("gesture", self.gesture, MAX_GESTURE).strip()
        if not gesture:
            raise InvalidInput(
                "gesture is empty; write one sentence saying what happened, with its tone"
            )
        kind = _text("kind", self.kind or "narrative", 32).strip().lower()
        if kind not in KINDS:
            raise InvalidInput(f"kind={self.kind!r} is unknown; use one of {list(KINDS)}")
        dims = {
            name: check_dimension(name, getattr(self, name))
            for name in ("importance", "emotional", "unresolved")
        }
        if kind == "dream":
            dims["importance"] = 1  # dreams never outweigh lived memory
        tags = _string_list("tags", self.tags, MAX_TAGS, MAX_TAG)
        tags = list(dict.fromkeys(t for t in (normalise_tag(x) for x in tags) if t))
        related = _string_list("related_entities", self.related_entities, 200, 200)
        entities_role = _text("entities_role", self.entities_role, MAX_ENTITIES_ROLE).strip()
        _, bad = parse_entities_role(entities_role)
        if bad:
            raise InvalidInput(
                f"entities_role part {bad[0].part!r}: {bad[0].reason}; use the form 'A=role+role; B=role'"
            )
        links = self.source_links or []
        if not isinstance(links, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in links
        ):
            raise InvalidInput("source_links must be a list of turn ids (integers)")
        if len(links) > MAX_LINKS:
            raise InvalidInput(f"{len(links)} source_links; the limit is {MAX_LINKS}")
        if self.supersedes is not None and (
            isinstance(self.supersedes, bool) or not isinstance(self.supersedes, int)
        ):
            raise InvalidInput(
                f"supersedes={self.supersedes!r} must be a narrative id (an integer) from memory_search"
            )
        return NarrativeInput(
            gesture=gesture,
            context=_text("context", self.context, MAX_TEXT),
            cognition_direction=_text("cognition_direction", self.cognition_direction, MAX_TEXT),
            tags=tags,
            entities_role=entities_role,
            related_entities=related,
            source_links=list(dict.fromkeys(links)),
            kind=kind,
            created_at=parse_time(self.created_at, "created_at"),
            supersedes=self.supersedes,
            **dims,
        )


def _text(name: str, value: Any, limit: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidInput(
            f"{name} is {len(value):,} characters; the limit is {limit:,} — shorten it"
        )
    return valid_text(value)


def _string_list(name: str, value: Any, max_items: int, max_len: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{name} must be a list of strings")
    items: list[str] = [valid_text(v).strip() for v in value if v.strip()]
    if len(items) > max_items:
        raise InvalidInput(f"{len(items)} {name}; the limit is {max_items}")
    for v in items:
        if len(v) > max_len:
            raise InvalidInput(f"{name} item {v[:20]!r}… is longer than {max_len} characters")
    return items


def index_text(gesture: str, context: str, cognition_direction: str, tags: Sequence[str]) -> str:
    """What search sees of a narrative: its three texts and its tags."""
    return "\n".join(p for p in (gesture, context, cognition_direction, " ".join(tags)) if p)


#: The columns a restore writes as they were exported (the id is the new database's).
_RESTORED = (
    "gesture",
    "context",
    "cognition_direction",
    "importance",
    "emotional",
    "recurrence",
    "unresolved",
    "weight",
    "kind",
    "tags",
    "entities_role",
    "related_entities",
    "created_at",
    "updated_at",
    "forgotten_at",
    "forgotten_why",
    "recorded_at",
    "retired_at",
)

_COLUMNS = (
    "id, gesture, context, cognition_direction, importance, emotional, recurrence, unresolved, weight,"
    " kind, tags, entities_role, related_entities, created_at, updated_at, supersedes,"
    " superseded_by, forgotten_at, forgotten_why, recorded_at, retired_at"
)
_NAMES = tuple(c.strip() for c in _COLUMNS.split(","))


class Narratives:
    """The narratives of one agent database."""

    def __init__(self, db: Storage, analyser: Analyser = DEFAULT_ANALYSER, *, clock: Clock):
        self.db = db
        self.clock = clock
        self.index = open_index(db, NARRATIVE_INDEX, analyser)
        self._seen_one = False  # `empty`: a row once seen is there for good
        self.index.lexical_source(lambda ids: dict(self.text_rows(ids)), self.ids)
        if self.index.stale:  # made by another lexical analyser: cut every text anew, once
            self.index.reanalyse(self.text_rows(self.ids()))

    @staticmethod
    def create_tables(db: Storage) -> None:
        """The narrative tables (agent migration 1)."""
        db.execute(
            f"""CREATE TABLE narratives(
            id INTEGER PRIMARY KEY,
            gesture TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT '',
            cognition_direction TEXT NOT NULL DEFAULT '',
            importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
            emotional INTEGER NOT NULL CHECK (emotional BETWEEN 1 AND 5),
            recurrence INTEGER NOT NULL CHECK (recurrence BETWEEN 1 AND 5),
            unresolved INTEGER NOT NULL CHECK (unresolved BETWEEN 1 AND 5),
            weight REAL NOT NULL CHECK (weight BETWEEN 0 AND 1),
            kind TEXT NOT NULL CHECK (kind IN {KINDS!r}),
            tags TEXT NOT NULL DEFAULT '[]',
            entities_role TEXT NOT NULL DEFAULT '',
            related_entities TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)"""
        )
        db.execute("CREATE INDEX narratives_created ON narratives(created_at)")
        db.execute("CREATE INDEX narratives_weight ON narratives(weight)")
        db.execute(
            """CREATE TABLE narrative_tags(
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (narrative_id, tag)) WITHOUT ROWID"""
        )
        db.execute("CREATE INDEX narrative_tags_tag ON narrative_tags(tag)")
        db.execute(
            """CREATE TABLE narrative_links(
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            turn_id INTEGER NOT NULL REFERENCES turns(id),
            PRIMARY KEY (narrative_id, turn_id)) WITHOUT ROWID"""
        )
        db.execute("CREATE INDEX narrative_links_turn ON narrative_links(turn_id)")
        create_index(db, NARRATIVE_INDEX)

    @staticmethod
    def add_tombstones(db: Storage) -> None:
        """Corrections and forgetting (agent migration 3)."""
        db.execute("ALTER TABLE narratives ADD COLUMN supersedes INTEGER REFERENCES narratives(id)")
        db.execute(
            "ALTER TABLE narratives ADD COLUMN superseded_by INTEGER REFERENCES narratives(id)"
        )
        db.execute("ALTER TABLE narratives ADD COLUMN forgotten_at TEXT")
        db.execute("ALTER TABLE narratives ADD COLUMN forgotten_why TEXT")

    @staticmethod
    def add_record_times(db: Storage) -> None:
        """Record time (agent migration 5): when Tideline wrote each narrative (`recorded_at`)
        and when it left use, superseded or forgotten (`retired_at`); `created_at` stays its
        valid time, when it happened (a dream's reflection: the day dreamt of). Backfill: a
        narrative's `updated_at` is its write's time until it is edited or forgotten, the
        latest time still known for it then; a superseded one retired when its successor was
        written, a forgotten one when it was forgotten."""
        db.execute("ALTER TABLE narratives ADD COLUMN recorded_at TEXT")
        db.execute("ALTER TABLE narratives ADD COLUMN retired_at TEXT")
        db.execute("UPDATE narratives SET recorded_at = updated_at")
        db.execute(
            "UPDATE narratives SET retired_at = COALESCE(forgotten_at, (SELECT s.recorded_at"
            " FROM narratives s WHERE s.id = narratives.superseded_by))"
            " WHERE forgotten_at IS NOT NULL OR superseded_by IS NOT NULL"
        )

    def tag_sharers(self, tags: Sequence[str], exclude: int | None = None) -> int:
        if not tags:
            return 0
        marks = ",".join("?" * len(tags))
        return int(
            self.db.scalar(
                f"SELECT count(DISTINCT narrative_id) FROM narrative_tags WHERE tag IN ({marks})"
                f" AND narrative_id != ? AND narrative_id IN (SELECT id FROM narratives WHERE {LIVE})",
                (*tags, exclude if exclude is not None else -1),
            )
        )

    def insert(self, n: NarrativeInput) -> int:
        """Insert a validated narrative (inside the caller's transaction); returns its id.
        With `supersedes` the old narrative must be live; it leaves search here."""
        if n.supersedes is not None:
            self.require_live(n.supersedes)
        recurrence = recurrence_from_count(self.tag_sharers(n.tags))
        weight = compute_weight(n.importance, n.emotional, recurrence, n.unresolved)
        now = now_text(self.clock)  # record time; `created_at` is valid time
        stamp = n.created_at or now
        nid: int = self.db.scalar(
            "INSERT INTO narratives(gesture, context, cognition_direction, importance, emotional,"
            " recurrence, unresolved, weight, kind, tags, entities_role, related_entities, created_at,"
            " updated_at, supersedes, recorded_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                n.gesture,
                n.context,
                n.cognition_direction,
                n.importance,
                n.emotional,
                recurrence,
                n.unresolved,
                weight,
                n.kind,
                json.dumps(n.tags, ensure_ascii=False),
                n.entities_role,
                json.dumps(n.related_entities, ensure_ascii=False),
                stamp,
                now,
                n.supersedes,
                now,
            ),
        )
        if n.supersedes is not None:
            self.db.execute(
                "UPDATE narratives SET superseded_by = ?, retired_at = ? WHERE id = ?",
                (nid, now, n.supersedes),
            )
            self.index.delete([n.supersedes])
        self.db.executemany(
            "INSERT INTO narrative_tags(narrative_id, tag) VALUES (?, ?)",
            [(nid, t) for t in n.tags],
        )
        self.db.executemany(
            "INSERT INTO narrative_links(narrative_id, turn_id) VALUES (?, ?)",
            [(nid, t) for t in n.source_links],
        )
        self.index.upsert_many(
            [(nid, index_text(n.gesture, n.context, n.cognition_direction, n.tags))]
        )
        self.deflate()
        return nid

    def deflate(self) -> dict[int, float]:
        """Apply the anti-inflation rule to the most recent narratives; returns changed weights."""
        rows = self.db.rows(
            "SELECT id, created_at, importance, emotional, recurrence, unresolved, weight FROM narratives"
            f" WHERE {LIVE} ORDER BY created_at DESC, id DESC LIMIT ?",
            (DEFAULT_WINDOW,),
        )
        recent = [
            WeightedNarrative(
                r["id"],
                from_text(r["created_at"]),
                r["importance"],
                r["emotional"],
                r["recurrence"],
                r["unresolved"],
                r["weight"],
            )
            for r in rows
        ]
        changed = deflate_recent(recent, window=DEFAULT_WINDOW, ceiling=DEFAULT_CEILING)
        self.db.executemany(
            "UPDATE narratives SET weight = ? WHERE id = ?", [(w, i) for i, w in changed.items()]
        )
        return {int(i): w for i, w in changed.items()}  # type: ignore[call-overload]

    def get(self, ids: Sequence[int], *, links: bool = True) -> list[Narrative]:
        """These narratives in the order of `ids` (unknown ids left out); `links=False` skips
        reading the source links."""
        ids = storable_ids(ids)
        by_id: dict[int, Narrative] = {}
        for marks, part in id_lists(ids):
            rows = self.db.rows(f"SELECT {_COLUMNS} FROM narratives WHERE id IN ({marks})", part)
            found = self._links(f"narrative_id IN ({marks})", part) if links else {}
            by_id.update((r["id"], _narrative(r, found.get(r["id"], []))) for r in rows)
        return [by_id[i] for i in ids if i in by_id]

    def all(self, *, links: bool = False) -> list[Narrative]:
        """Every live narrative, by id (what the script layer computes over). Read with one
        `fetchall` (no per-row cursor step in Python) and no JSON parse of an empty list: the
        script layer reads every narrative once per run."""
        rows: list[tuple[Any, ...]] = self.db.execute(
            f"SELECT {_COLUMNS} FROM narratives WHERE {LIVE} ORDER BY id"
        ).fetchall()
        found = self._links("TRUE", ()) if links else {}
        return [_narrative(dict(zip(_NAMES, r, strict=True)), found.get(r[0], [])) for r in rows]

    def _links(self, where: str, params: Sequence[object]) -> dict[int, list[int]]:
        links: dict[int, list[int]] = {}
        for nid, tid in self.db.execute(
            f"SELECT narrative_id, turn_id FROM narrative_links WHERE {where} ORDER BY turn_id",
            params,
        ):
            links.setdefault(nid, []).append(tid)
        return links

    def require(self, nid: int) -> Narrative:
        found = self.get([nid])
        if not found:
            raise NotFound(f"narrative {nid} does not exist; find ids with memory_search")
        return found[0]

    def require_live(self, nid: int) -> Narrative:
        """The narrative, or an error when it is unknown, forgotten or already corrected."""
        n = self.require(nid)
        if n.forgotten_at:
            raise InvalidInput(
                f"narrative {nid} was forgotten on {n.forgotten_at}; nothing to correct"
            )
        if n.superseded_by is not None:
            raise InvalidInput(
                f"narrative {nid} is already superseded by {n.superseded_by}; correct that one instead"
            )
        return n

    def existing(self, ids: Sequence[int]) -> set[int]:
        """Which of these ids are narratives."""
        found: set[int] = set()
        for marks, part in id_lists(ids):
            found.update(
                r[0]
                for r in self.db.execute(f"SELECT id FROM narratives WHERE id IN ({marks})", part)
            )
        return found

    def filter(
        self,
        since: str | None,
        until: str | None,
        min_weight: float | None,
        tags: Sequence[str] | None,
        kind: str | None,
    ) -> Scope:
        """Search scope over the narratives that meet every given filter; tags match by
        `normalise_tag`, any one of them suffices. Only live narratives have index rows
        (forgetting and superseding delete them, a restore indexes live ones only), so no
        condition says so: without filters the scope is the whole index, searched on the
        in-process vector copy (a filtered KNN runs in sqlite-vec: ~30 ms at 10k narratives)."""
        conds, params = time_range("created_at", since, until)
        if min_weight is not None:
            conds.append("weight >= ?")
            params.append(float(min_weight))
        if kind:
            conds.append("kind = ?")
            params.append(kind)
        if tags:
            wanted = [valid_text(t) for t in (normalise_tag(x) for x in tags) if t]
            marks = ",".join("?" * len(wanted))
            conds.append(f"id IN (SELECT narrative_id FROM narrative_tags WHERE tag IN ({marks}))")
            params += wanted
        return scope(self.index, "narratives", conds, params)

    def counts(self) -> dict[str, Any]:
        """How many narratives there are (in all and by kind) and their mean weight."""
        kinds: dict[str, int] = {
            str(kind): int(n)
            for kind, n in self.db.execute(
                f"SELECT kind, count(*) FROM narratives WHERE {LIVE} GROUP BY kind"
            )
        }
        mean = self.db.scalar(f"SELECT avg(weight) FROM narratives WHERE {LIVE}")
        return {
            "narratives": sum(kinds.values()),
            "narratives_by_kind": kinds,
            "mean_weight": None if mean is None else round(float(mean), 4),
            "superseded_narratives": int(
                self.db.scalar("SELECT count(*) FROM narratives WHERE superseded_by IS NOT NULL")
            ),
            "forgotten_narratives": int(
                self.db.scalar("SELECT count(*) FROM narratives WHERE forgotten_at IS NOT NULL")
            ),
        }

    def pool(
        self,
        min_weight: float,
        limit: int,
        kinds: Sequence[str] | None,
        before: str | None = None,
    ) -> list[Narrative]:
        """Narratives weighing at least `min_weight`, in `POOL_ORDER`, at most `limit` (T2);
        with `before`, only those created (valid time) before it: a past day's pool."""
        sql = f"SELECT id FROM narratives WHERE weight >= ? AND {LIVE}"
        params: list[object] = [float(min_weight)]
        if before is not None:
            sql += " AND created_at < ?"
            params.append(before)
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        ids = [
            r[0] for r in self.db.execute(f"{sql} ORDER BY {POOL_ORDER} LIMIT ?", (*params, limit))
        ]
        return self.get(ids)

    def heaviest_linked(self, turn_ids: Sequence[int]) -> tuple[int, float, list[int]] | None:
        """The heaviest narrative linking to one of these turns (newest first among equals):
        (its id, its weight, the turns among `turn_ids` it links to); None when none links."""
        best: tuple[float, str, int] | None = None
        for marks, part in id_lists(turn_ids):
            row = self.db.one(
                "SELECT n.id AS id, n.weight AS weight, n.created_at AS created_at"
                " FROM narrative_links l JOIN narratives n ON n.id = l.narrative_id"
                f" WHERE l.turn_id IN ({marks}) AND n.forgotten_at IS NULL"
                " AND n.superseded_by IS NULL ORDER BY n.weight DESC, n.created_at DESC, n.id DESC LIMIT 1",
                part,
            )
            if row and (best is None or (row["weight"], row["created_at"], row["id"]) > best):
                best = (row["weight"], row["created_at"], row["id"])
        if best is None:
            return None
        wanted = set(turn_ids)
        linked = self._links("narrative_id = ?", (best[2],)).get(best[2], [])
        return best[2], float(best[0]), [t for t in linked if t in wanted]

    def unlinked(self) -> list[dict[str, Any]]:
        """Narratives without source links (id, gesture, context, created_at), oldest first."""
        return self.db.rows(
            f"SELECT id, gesture, context, created_at FROM narratives WHERE {LIVE} AND NOT EXISTS"
            " (SELECT 1 FROM narrative_links l WHERE l.narrative_id = narratives.id)"
            " ORDER BY created_at, id"
        )

    def linked_turn_ids(self, turn_ids: Sequence[int]) -> set[int]:
        """Which of these turns some narrative links to."""
        found: set[int] = set()
        for marks, part in id_lists(turn_ids):
            found.update(
                r[0]
                for r in self.db.execute(
                    f"SELECT DISTINCT turn_id FROM narrative_links WHERE turn_id IN ({marks})", part
                )
            )
        return found

    def add_links(self, pairs: Sequence[tuple[int, int]]) -> None:
        """Link (narrative id, turn id) pairs in one transaction; a link already there stays."""
        with self.db.transaction():
            self.db.executemany(
                "INSERT INTO narrative_links(narrative_id, turn_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                pairs,
            )

    def between(
        self, since: str, until: str, kinds: Sequence[str] | None = None
    ) -> list[Narrative]:
        """Narratives created in [since, until), oldest first; only `kinds` when given (a day's
        memories, for the dream layers)."""
        sql = "SELECT id FROM narratives WHERE created_at >= ? AND created_at < ?"
        params: list[object] = [since, until]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        return self.get([r[0] for r in self.db.execute(f"{sql} ORDER BY created_at, id", params)])

    def latest(self, kind: str, limit: int, before: str | None = None) -> list[Narrative]:
        """The newest live narratives of one kind, newest first (the self-concept: reflections;
        a forgotten or superseded one is no longer part of it); with `before`, the newest
        created (valid time) before it."""
        when = "" if before is None else " AND created_at < ?"
        ids = [
            r[0]
            for r in self.db.execute(
                f"SELECT id FROM narratives WHERE kind = ? AND {LIVE}{when}"
                " ORDER BY created_at DESC, id DESC LIMIT ?",
                (kind, *([] if before is None else [before]), limit),
            )
        ]
        return self.get(ids)

    def set_dimensions(self, rows: Sequence[tuple[int, int, int, int]]) -> None:
        """Store re-evaluated (importance, emotional, unresolved, id) rows in one transaction;
        each value is checked 1–5 and a dream keeps importance 1. Weights are stale until the
        caller refreshes them (`tideline.analysis.scripts.refresh_weights`)."""
        checked = [
            (
                check_dimension("importance", imp),
                check_dimension("emotional", emo),
                check_dimension("unresolved", unr),
                nid,
            )
            for imp, emo, unr, nid in rows
        ]
        with self.db.transaction():
            self.db.executemany(
                "UPDATE narratives SET importance = CASE kind WHEN 'dream' THEN 1 ELSE ? END,"
                " emotional = ?, unresolved = ?, updated_at = ? WHERE id = ?",
                [(imp, emo, unr, now_text(self.clock), nid) for imp, emo, unr, nid in checked],
            )

    def set_weights(self, rows: Sequence[tuple[int, float, int]]) -> None:
        """Store refreshed (recurrence, weight, id) rows in one transaction."""
        with self.db.transaction():
            self.db.executemany(
                "UPDATE narratives SET recurrence = ?, weight = ? WHERE id = ?", rows
            )

    def texts_without_vectors(self, limit: int | None = None) -> list[tuple[int, str]]:
        """(id, text as search sees it) of the oldest `limit` (None: all) narratives without a
        vector."""
        return self.text_rows(pending_ids(self.ids(), self.index, limit))

    def empty(self) -> bool:
        """No narrative yet. A row is never deleted (a forget leaves its tombstone), so once this
        handle has seen one it answers without asking: a turn search asks every time (issue 34
        counts a PostgreSQL search's statements)."""
        if not self._seen_one:
            self._seen_one = self.db.scalar("SELECT 1 FROM narratives LIMIT 1") is not None
        return not self._seen_one

    def ids(self) -> list[int]:
        """Every live narrative id, ascending (what the index should hold)."""
        return [
            r[0] for r in self.db.execute(f"SELECT id FROM narratives WHERE {LIVE} ORDER BY id")
        ]

    def text_rows(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        """(id, text) of these narratives, as search and the embedder see them."""
        out: list[tuple[int, str]] = []
        for marks, part in id_lists(ids):
            rows = self.db.rows(
                "SELECT id, gesture, context, cognition_direction, tags FROM narratives"
                f" WHERE id IN ({marks}) ORDER BY id",
                part,
            )
            out += [
                (
                    r["id"],
                    index_text(
                        r["gesture"], r["context"], r["cognition_direction"], json.loads(r["tags"])
                    ),
                )
                for r in rows
            ]
        return out

    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        """What search sees of these narratives, by id (for keyword checks)."""
        return dict(self.text_rows(ids))

    def texts_and_sources(self, ids: Iterable[int]) -> tuple[dict[int, str], dict[int, list[int]]]:
        """`texts` and the source links (`get`'s `source_links`) of these narratives, in one
        statement per `IN` list: a turn search's memory keys ask both of the same candidates,
        each a statement that waits on a PostgreSQL server (issue 34)."""
        texts: dict[int, str] = {}
        links: dict[int, list[int]] = {}
        for marks, part in id_lists(storable_ids(ids)):
            rows = self.db.execute(
                "SELECT 0, id, gesture, context, cognition_direction, tags FROM narratives"
                f" WHERE id IN ({marks}) UNION ALL SELECT 1, narrative_id, NULL, NULL, NULL,"
                f" CAST(turn_id AS TEXT) FROM narrative_links WHERE narrative_id IN ({marks})",
                [*part, *part],
            ).fetchall()
            for kind, nid, gesture, context, direction, value in rows:
                if kind == 0:
                    texts[nid] = index_text(gesture, context, direction, json.loads(value))
                else:
                    links.setdefault(nid, []).append(int(value))
        return texts, {i: sorted(links.get(i, [])) for i in texts}

    # -- forgetting ----------------------------------------------------------------------------
    def forget(self, ids: Sequence[int], why: str) -> int:
        """Erase these narratives' texts, tags and index rows, leaving tombstones (id, times,
        weight, links); returns how many were forgotten now."""
        stamp = now_text(self.clock)
        done = 0
        with self.db.transaction():
            for live in unforgotten(self.db, "narratives", ids):
                self.db.executemany(
                    "UPDATE narratives SET gesture = '', context = '', cognition_direction = '',"
                    " tags = '[]', entities_role = '', related_entities = '[]', updated_at = ?,"
                    " forgotten_at = ?, forgotten_why = ?, retired_at = COALESCE(retired_at, ?)"
                    " WHERE id = ?",
                    [(stamp, stamp, why, stamp, i) for i in live],
                )
                self.db.executemany(
                    "DELETE FROM narrative_tags WHERE narrative_id = ?", [(i,) for i in live]
                )
                self.index.delete(live)
                done += len(live)
        return done

    # -- backup --------------------------------------------------------------------------------
    def dump(self) -> Iterator[dict[str, Any]]:
        """Every narrative as stored, tombstones and superseded ones included, with its links."""
        links = self._links("TRUE", ())
        for row in self.db.rows(f"SELECT {_COLUMNS} FROM narratives ORDER BY id"):
            row["tags"] = json.loads(row["tags"])
            row["related_entities"] = json.loads(row["related_entities"])
            yield {**row, "source_links": links.get(row["id"], [])}

    def find(self, created_at: str, gesture: str, forgotten_at: str | None) -> int | None:
        """The narrative written at `created_at` with this gesture — a tombstone: forgotten at
        `forgotten_at` — so a restore adds each once."""
        found = self.db.scalar(
            "SELECT id FROM narratives WHERE created_at = ? AND gesture = ?"
            " AND forgotten_at IS NOT DISTINCT FROM ? ORDER BY id LIMIT 1",
            (created_at, gesture, forgotten_at),
        )
        return None if found is None else int(found)

    def restore(self, row: Mapping[str, Any], links: Sequence[int]) -> int:
        """Insert a narrative from a Tideline export as it was stored (weights, times, marks),
        inside the caller's transaction; `supersedes` / `superseded_by` are ids in this database
        (or None). Only a live one is indexed."""
        values = {name: row.get(name) for name in _RESTORED}
        values["tags"] = json.dumps(list(values["tags"] or []), ensure_ascii=False)
        values["related_entities"] = json.dumps(
            list(values["related_entities"] or []), ensure_ascii=False
        )
        names = ", ".join(_RESTORED)
        nid = int(
            self.db.scalar(
                f"INSERT INTO narratives({names}) VALUES ({', '.join('?' * len(_RESTORED))})"
                " RETURNING id",
                [values[n] for n in _RESTORED],
            )
        )
        tags = [] if row.get("forgotten_at") else list(row.get("tags") or [])
        self.db.executemany(
            "INSERT INTO narrative_tags(narrative_id, tag) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(nid, normalise_tag(t)) for t in tags if normalise_tag(t)],
        )
        self.db.executemany(
            "INSERT INTO narrative_links(narrative_id, turn_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(nid, t) for t in links],
        )
        if not row.get("forgotten_at") and row.get("superseded_by") is None:
            self.index.upsert_many(
                [
                    (
                        nid,
                        index_text(
                            str(row["gesture"]),
                            str(row.get("context") or ""),
                            str(row.get("cognition_direction") or ""),
                            tags,
                        ),
                    )
                ]
            )
        return nid

    def set_supersession(self, old: int, new: int) -> None:
        """Restore a correction whose two sides are both in this database now."""
        self.db.execute(
            "UPDATE narratives SET superseded_by = ?, retired_at = COALESCE(retired_at,"
            " (SELECT s.recorded_at FROM narratives s WHERE s.id = ?)) WHERE id = ?",
            (new, new, old),
        )
        self.db.execute("UPDATE narratives SET supersedes = ? WHERE id = ?", (old, new))
        self.index.delete([old])


def _list(text: str) -> list[str]:
    """A stored JSON list (most narratives have no related entities: no parse for those)."""
    return [] if text == "[]" else cast(list[str], json.loads(text))


def _narrative(row: dict[str, Any], links: list[int]) -> Narrative:
    if row["forgotten_at"]:
        row["gesture"] = FORGOTTEN
    row["tags"] = _list(row["tags"])
    row["related_entities"] = _list(row["related_entities"])
    return Narrative(**row, source_links=links)
