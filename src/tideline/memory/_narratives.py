"""Narratives: validation, weights at write time, anti-inflation, tags and source links.

Limits (documented in docs/memory.md): gesture ≤ 500 characters and required; context and
cognition_direction ≤ 8,000 each; ≤ 32 tags of ≤ 64 characters; ≤ 1,000 source links;
entities_role ≤ 2,000 characters in the form `A=role+role; B=role`.

At write time recurrence = how many OTHER narratives share at least one tag, mapped to 1–5 by
`recurrence_from_count`; dreams have importance forced to 1. After the insert the anti-inflation
rule (`deflate_recent`: when the mean weight of the 50 most recent narratives exceeds 0.7, scale
those weights by 0.7 / mean) runs in the same transaction. The rules live in `_weights`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from tideline.errors import InvalidInput, NotFound
from tideline.memory._entities import parse_entities_role
from tideline.memory._schema import KINDS, NARRATIVE_INDEX
from tideline.memory._time import now, parse_time
from tideline.memory._types import Narrative
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
from tideline.search import TextIndex
from tideline.store import Database

MAX_GESTURE = 500
MAX_TEXT = 8_000
MAX_TAGS = 32
MAX_TAG = 64
MAX_LINKS = 1_000
MAX_ENTITIES_ROLE = 2_000


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
        kind = (self.kind or "narrative").strip().lower()
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
    return value


def _string_list(name: str, value: Any, max_items: int, max_len: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in value.split(",")]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{name} must be a list of strings")
    value = [v.strip() for v in value if v.strip()]
    if len(value) > max_items:
        raise InvalidInput(f"{len(value)} {name}; the limit is {max_items}")
    for v in value:
        if len(v) > max_len:
            raise InvalidInput(f"{name} item {v[:20]!r}… is longer than {max_len} characters")
    return value


def index_text(gesture: str, context: str, cognition_direction: str, tags: Sequence[str]) -> str:
    """What search sees of a narrative: its three texts and its tags."""
    return "\n".join(p for p in (gesture, context, cognition_direction, " ".join(tags)) if p)


_COLUMNS = (
    "id, gesture, context, cognition_direction, importance, emotional, recurrence, unresolved, weight,"
    " kind, tags, entities_role, related_entities, created_at, updated_at"
)


class Narratives:
    """The narratives of one agent database."""

    def __init__(self, db: Database):
        self.db = db
        self.index = TextIndex(db, NARRATIVE_INDEX)

    def tag_sharers(self, tags: Sequence[str], exclude: int | None = None) -> int:
        if not tags:
            return 0
        marks = ",".join("?" * len(tags))
        return int(
            self.db.scalar(
                f"SELECT count(DISTINCT narrative_id) FROM narrative_tags WHERE tag IN ({marks})"
                " AND narrative_id != ?",
                (*tags, exclude if exclude is not None else -1),
            )
        )

    def insert(self, n: NarrativeInput) -> int:
        """Insert a validated narrative (inside the caller's transaction); returns its id."""
        recurrence = recurrence_from_count(self.tag_sharers(n.tags))
        weight = compute_weight(n.importance, n.emotional, recurrence, n.unresolved)
        stamp = n.created_at or now()
        self.db.execute(
            "INSERT INTO narratives(gesture, context, cognition_direction, importance, emotional,"
            " recurrence, unresolved, weight, kind, tags, entities_role, related_entities, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                now(),
            ),
        )
        nid = int(self.db.conn.last_insert_rowid())
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
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            (DEFAULT_WINDOW,),
        )
        recent = [
            WeightedNarrative(
                r["id"],
                datetime.fromisoformat(r["created_at"].replace("Z", "+00:00")),
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

    def get(self, ids: Sequence[int]) -> list[Narrative]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.rows(f"SELECT {_COLUMNS} FROM narratives WHERE id IN ({marks})", list(ids))
        links: dict[int, list[int]] = {}
        for nid, tid in self.db.execute(
            f"SELECT narrative_id, turn_id FROM narrative_links WHERE narrative_id IN ({marks}) ORDER BY turn_id",
            list(ids),
        ):
            links.setdefault(nid, []).append(tid)
        by_id = {}
        for r in rows:
            r["tags"] = json.loads(r["tags"])
            r["related_entities"] = json.loads(r["related_entities"])
            by_id[r["id"]] = Narrative(**r, source_links=links.get(r["id"], []))
        return [by_id[i] for i in ids if i in by_id]

    def require(self, nid: int) -> Narrative:
        found = self.get([nid])
        if not found:
            raise NotFound(f"narrative {nid} does not exist; find ids with memory_search")
        return found[0]

    def unembedded(self, limit: int = 100_000) -> list[tuple[int, str]]:
        """(id, text) of narratives without a vector."""
        missing = f" WHERE {self.index.pending_filter()}"
        return self._texts(
            f"SELECT id, gesture, context, cognition_direction, tags FROM narratives{missing}"
            " ORDER BY id LIMIT ?",
            (limit,),
        )

    def text_rows(self, ids: Sequence[int]) -> list[tuple[int, str]]:
        """(id, text) of these narratives, as search and the embedder see them."""
        marks = ",".join("?" * len(ids))
        return self._texts(
            f"SELECT id, gesture, context, cognition_direction, tags FROM narratives WHERE id IN ({marks})",
            list(ids),
        )

    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        """What search sees of these narratives, by id (for keyword checks)."""
        return dict(self.text_rows(ids))

    def _texts(self, sql: str, params: Sequence[object]) -> list[tuple[int, str]]:
        rows = self.db.rows(sql, params)
        return [
            (
                r["id"],
                index_text(
                    r["gesture"], r["context"], r["cognition_direction"], json.loads(r["tags"])
                ),
            )
            for r in rows
        ]
