"""The Tideline export: one self-describing JSONL file, a manifest and then every record.

A backup must come back whole and must not double when restored twice, so records carry what the
database keeps, not what a caller once sent: a turn its stored hash (a restore deduplicates on
it), a narrative its weights, times and marks, and its source links as the *hashes* of its turns
(ids differ between homes; the hash names the same turn in both). Tombstones travel too, so a
restored narrative's link to a forgotten turn still reads "[forgotten]".

    {"type": "tideline-export", "version": 2, "counts": {...}, "clocks", "links", …}  the manifest
    {"type": "session", "key", "source", "title", "created_at", "forgotten_at", "forgotten_why"}
    {"type": "turn", "session", "id", "seq", "role", "speaker", "text", "ts", "hash", …}
    {"type": "narrative", "id", "gesture", …, "source_links": [turn hashes], "supersedes", …}
    then the profile: "fact" (evidence naming turns by hash), "observation", "relationship",
    "event", "edge", "strategy", "user_model", "trajectory", "snapshot"

Records come grouped by kind, in the manifest's `counts` order; docs/export.md states every field.
Markdown renders the same records for a person to read; only JSONL is read back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TextIO

from tideline.clock import parse_time
from tideline.errors import InvalidInput
from tideline.memory._narratives import NarrativeInput, Narratives
from tideline.memory._raw import RawContext
from tideline.memory._results import ImportProblem

EXPORT_TYPE = "tideline-export"
EXPORT_VERSION = 2
#: Versions a restore reads: 1 had the same records under a shorter first line.
READABLE_VERSIONS = (1, 2)
EXPORT_FORMATS = ("jsonl", "markdown")
MEMORY_TYPES = ("session", "turn", "narrative")

#: How records point at each other, for a reader without our code (docs/export.md).
LINKS = {
    "turn.session": "the key of a session record",
    "narrative.source_links": "hashes of turn records (the turns it was written from)",
    "narrative.supersedes": "the id of the narrative record it corrects",
    "narrative.superseded_by": "the id of the narrative record that corrects it",
    "fact.evidence[].turn": "the hash of the turn record that backs or weakens it",
    "fact.evidence[].observation_id": "the id of the observation record behind it",
    "observation.turns": "hashes of the turn records it was read from",
    "fact.supersedes": "the id of the fact record it replaced",
    "edge.from_fact": "ids of fact records",
    "edge.to_fact": "ids of fact records",
    "strategy.fact_id": "the id of the fact record it asks about",
    "user_model.evidence": "ids of the fact records the reading rests on",
    "trajectory.anchors": "ids of fact records (or {fact_id, …}), or words",
}

#: What each clock is, field by field (ARCHITECTURE "Time: two clocks").
CLOCKS = {
    "valid": "when it was said or true in the user's life: turn.ts, valid_from, valid_to, "
    "said_at, last_seen_at, first_seen_at, narrative.created_at",
    "record": "when Tideline learned, changed or retired it: exported_at, recorded_at, "
    "retired_at, updated_at, fact.created_at, forgotten_at",
}


def header(
    agent: str,
    exported_at: str,
    records: Sequence[Mapping[str, Any]] = (),
    *,
    software: str = "",
    schema: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The manifest, the first line: what wrote the file, when on each clock, how many records
    of each kind follow (in that order) and how they link, so the file reads without our code
    and a cut-short copy is noticed on restore."""
    counts: dict[str, int] = {}
    said = [str(r["ts"]) for r in records if r.get("type") == "turn" and r.get("ts")]
    for r in records:
        counts[str(r["type"])] = counts.get(str(r["type"]), 0) + 1
    return {
        "type": EXPORT_TYPE,
        "version": EXPORT_VERSION,
        "spec": "docs/export.md",
        "agent": agent,
        "software": software,
        "schema": dict(schema or {}),
        "exported_at": exported_at,
        "valid_time": {"from": min(said, default=None), "to": max(said, default=None)},
        "counts": counts,
        "clocks": CLOCKS,
        "links": LINKS,
    }


def memory_records(raw: RawContext, narratives: Narratives) -> Iterator[dict[str, Any]]:
    """Sessions (each followed by its turns), then narratives, in id order."""
    for session in raw.dump_sessions():
        turns = session.pop("turns")
        key = session["key"]
        yield {"type": "session", **{k: v for k, v in session.items() if k != "id"}}
        for turn in turns:
            yield {"type": "turn", "session": key, **turn}
    rows = list(narratives.dump())
    linked = sorted({t for r in rows for t in r["source_links"]})
    hashes = raw.hashes(linked)
    for row in rows:
        row["source_links"] = [hashes[t] for t in row["source_links"] if t in hashes]
        yield {"type": "narrative", **row}


def write_export(records: Iterable[Mapping[str, Any]], out: TextIO, fmt: str) -> dict[str, int]:
    """Write `records` as JSONL or markdown; returns how many of each type."""
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput(f"export format {fmt!r} is unknown; use one of {list(EXPORT_FORMATS)}")
    counts: dict[str, int] = {}
    render = _Markdown(out) if fmt == "markdown" else None
    for record in records:
        kind = str(record["type"])
        if kind != EXPORT_TYPE:
            counts[kind] = counts.get(kind, 0) + 1
        if render is None:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            render.write(record)
    return counts


class _Markdown:
    """Writes export records as a document: a heading per session with its turns, a section per
    other type (narratives, facts, …)."""

    def __init__(self, out: TextIO):
        self.out = out
        self.section: str | None = None

    def write(self, r: Mapping[str, Any]) -> None:
        kind = str(r["type"])
        if kind == EXPORT_TYPE:
            self.out.write(f"# Tideline export of {r['agent']} ({r['exported_at']})\n")
            return
        group = "session" if kind == "turn" else kind
        if group != self.section and group != "session":
            self.out.write(f"\n## {kind.title()}s\n\n")
        self.section = group
        if kind == "session":
            title = f" — {r['title']}" if r.get("title") else ""
            gone = f" (forgotten {r['forgotten_at']})" if r.get("forgotten_at") else ""
            self.out.write(f"\n## Session {r['key']}{title}{gone}\n\n")
        elif kind == "turn":
            who = r.get("speaker") or r["role"]
            text = "[forgotten]" if r.get("forgotten_at") else str(r["text"]).replace("\n", "\n  ")
            self.out.write(f"- **{who}** ({r['ts']}, turn {r['id']}): {text}\n")
        elif kind == "narrative":
            self.out.write(_narrative_markdown(r))
        else:
            fields = ", ".join(
                f"{k}: {v}" for k, v in r.items() if k != "type" and v not in (None, "", [])
            )
            self.out.write(f"- {fields}\n")


def _narrative_markdown(r: Mapping[str, Any]) -> str:
    if r.get("forgotten_at"):
        return f"### #{r['id']} [forgotten {r['forgotten_at']}: {r.get('forgotten_why')}]\n\n"
    lines = [f"### #{r['id']} {r['gesture']}", ""]
    marks = [f"{r['kind']}", f"weight {r['weight']:.3f}", f"written {r['created_at']}"]
    if r.get("superseded_by"):
        marks.append(f"superseded by #{r['superseded_by']}")
    if r.get("supersedes"):
        marks.append(f"corrects #{r['supersedes']}")
    lines.append("*" + ", ".join(marks) + "*")
    for name in ("context", "cognition_direction"):
        if r.get(name):
            lines += ["", str(r[name])]
    if r.get("tags"):
        lines += ["", "tags: " + ", ".join(r["tags"])]
    return "\n".join(lines) + "\n\n"


def restore_narratives(
    raw: RawContext, narratives: Narratives, records: list[dict[str, Any]]
) -> tuple[int, int, list[ImportProblem]]:
    """Insert narratives of a Tideline export (inside the caller's transaction), as stored;
    one already there (same creation time and gesture) is not added again. Returns (added,
    already there, problems); a bad record is reported by its line and left out."""
    problems: list[ImportProblem] = []
    links = raw.ids_by_hash(sorted({h for r in records for h in _hashes(r)}))
    new_ids: dict[Any, int] = {}
    added = existing = 0
    exported = {r.get("id") for r in records}
    for r in records:
        line = r.pop("_line", None)
        try:
            row = _checked(r)
        except InvalidInput as exc:
            problems.append(ImportProblem(line, f"narrative {r.get('id')!r}: {exc}"))
            continue
        found = narratives.find(row["created_at"], row["gesture"], row["forgotten_at"])
        if found is not None:
            new_ids[r.get("id")] = found
            existing += 1
            continue
        if row.get("superseded_by") not in exported:
            row["superseded_by"] = None  # its correction is not in this file: it stays live
        new_ids[r.get("id")] = narratives.restore(row, [links[h] for h in _hashes(r) if h in links])
        added += 1
    for r in records:
        old, new = new_ids.get(r.get("id")), new_ids.get(r.get("superseded_by"))
        if old is not None and new is not None:
            narratives.set_supersession(old, new)
    return added, existing, problems


def _hashes(r: Mapping[str, Any]) -> list[str]:
    found = r.get("source_links")
    return [h for h in found if isinstance(h, str)] if isinstance(found, list) else []


def _checked(r: dict[str, Any]) -> dict[str, Any]:
    """The record with its fields checked by the rules a write obeys (a tombstone has no texts)."""
    forgotten = r.get("forgotten_at")
    fields = {
        k: r.get(k)
        for k in (
            "context",
            "cognition_direction",
            "importance",
            "emotional",
            "unresolved",
            "tags",
            "entities_role",
            "related_entities",
            "kind",
            "created_at",
        )
    }
    checked = NarrativeInput(gesture=r.get("gesture") or "-", **fields).validated()  # type: ignore[arg-type]
    recurrence, weight = r.get("recurrence"), r.get("weight")
    if isinstance(recurrence, bool) or not isinstance(recurrence, int) or not 1 <= recurrence <= 5:
        raise InvalidInput(f"recurrence={recurrence!r}; it must be an integer 1–5")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
        raise InvalidInput(f"weight={weight!r}; it must be a number from 0 to 1")
    gesture = "" if forgotten else checked.gesture
    if not forgotten and not str(r.get("gesture") or "").strip():
        raise InvalidInput("gesture is empty; a narrative that is not forgotten has one")
    return {
        **{k: getattr(checked, k) for k in fields},
        "gesture": gesture,
        "recurrence": recurrence,
        "weight": float(weight),
        "updated_at": parse_time(r.get("updated_at"), "updated_at") or checked.created_at,
        "forgotten_at": parse_time(forgotten, "forgotten_at"),
        "recorded_at": parse_time(r.get("recorded_at"), "recorded_at")
        or parse_time(r.get("updated_at"), "updated_at")
        or checked.created_at,
        "retired_at": parse_time(r.get("retired_at"), "retired_at")
        or parse_time(forgotten, "forgotten_at"),
        "forgotten_why": str(r.get("forgotten_why") or "") or None,
        "superseded_by": r.get("superseded_by"),
    }
