"""The profile's facts read back from a Tideline export (`tideline import` of a backup).

Each fact comes back as it was — status, confidence, counters, both clocks, its timeline of
status changes and its evidence — under a new id, with `supersedes` and `merged_into` pointing
at the new ids. Evidence names its turn by hash (`Profile.dump`), found here by hash: the same
file restores the sessions first. Evidence through an observation only is left out and counted:
observations are not restored. A fact already here (same subject, category, value and record
time) is not added again, so restoring twice adds nothing. Every field is checked against the
rules the database keeps; a record that breaks one is a problem naming its line, left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tideline.clock import parse_time
from tideline.errors import InvalidInput
from tideline.memory import ImportProblem
from tideline.profile._dedupe import normalise
from tideline.profile._drafts import FactDraft, choice
from tideline.profile._facts import FactStore
from tideline.profile._types import POLARITIES, SOURCE_TYPES, STATUSES, StatusChange

#: What a restore did: facts added, already there, evidence rows left out, problems.
Restored = tuple[int, int, int, list[ImportProblem]]


def restore_facts(
    facts: FactStore,
    records: Sequence[Mapping[str, Any]],
    turn_ids: Callable[[list[str]], dict[str, int]],
    now: str,
) -> Restored:
    """Insert the fact records of an export (inside the caller's transaction)."""
    here = {_identity(f.subject, f.category, f.value, f.created_at) for f in facts.list()}
    found = turn_ids(sorted({h for r in records for h in _hashes(r)}))
    new_ids: dict[Any, int] = {}
    links: list[tuple[int, Any, Any]] = []
    added = existing = dropped = 0
    problems: list[ImportProblem] = []
    for r in records:
        try:
            row, changes = _checked(r)
        except InvalidInput as exc:
            problems.append(ImportProblem(r.get("_line"), f"fact {r.get('id')!r}: {exc}"))
            continue
        key = _identity(row["subject"], row["category"], row["value"], row["created_at"])
        if key in here:
            existing += 1
            continue
        here.add(key)
        fid = facts.restore(row, changes)
        new_ids[r.get("id")] = fid
        links.append((fid, r.get("supersedes"), r.get("merged_into")))
        for ev in r.get("evidence") or []:
            hashed = ev.get("turn") if isinstance(ev, dict) else None
            turn = found.get(hashed) if isinstance(hashed, str) else None
            if turn is None or not _evidence_ok(ev):
                dropped += 1
                continue
            facts.add_evidence(
                fid,
                turn_id=turn,
                observation_id=None,
                polarity=ev["polarity"],
                said_at=_time(ev.get("said_at"), "said_at"),
                now=_time(ev.get("created_at"), "created_at") or now,
            )
        added += 1
    for fid, supersedes, merged_into in links:
        if supersedes in new_ids or merged_into in new_ids:
            facts.restore_links(fid, new_ids.get(supersedes), new_ids.get(merged_into))
    return added, existing, dropped, problems


def _identity(subject: str, category: str, value: str, created_at: str) -> tuple[str, ...]:
    return normalise(subject), normalise(category), normalise(value), created_at


def _hashes(r: Mapping[str, Any]) -> list[str]:
    found = r.get("evidence")
    evidence = found if isinstance(found, list) else []
    return [e["turn"] for e in evidence if isinstance(e, dict) and isinstance(e.get("turn"), str)]


def _evidence_ok(ev: Mapping[str, Any]) -> bool:
    try:
        _one_of(ev.get("polarity"), "polarity", POLARITIES)
        _time(ev.get("said_at"), "said_at")
        _time(ev.get("created_at"), "created_at")
    except InvalidInput:
        return False
    return True


def _checked(r: Mapping[str, Any]) -> tuple[dict[str, Any], list[StatusChange]]:
    """The columns of a fact record, checked by the rules a write obeys, and its timeline."""
    draft = FactDraft(
        _words(r.get("subject"), "subject"),
        _words(r.get("category"), "category"),
        _words(r.get("value"), "value"),
        source_type=_one_of(r.get("source_type"), "source_type", SOURCE_TYPES),
        decay_days=None if r.get("decay_days") is None else _count(r["decay_days"], "decay_days"),
    )
    row: dict[str, Any] = {
        "subject": draft.subject,
        "category": draft.category,
        "value": draft.value,
        "status": _one_of(r.get("status"), "status", STATUSES),
        "source_type": draft.source_type,
        "decay_days": draft.decay_days,
        "confidence": _share(r.get("confidence"), "confidence"),
        "prior": _share(r.get("prior", r.get("confidence")), "prior"),
        "mention_count": _count(r.get("mention_count")),
        "rejected_why": _text(r.get("rejected_why"), "rejected_why"),
    }
    for name in ("valid_from", "last_seen_at", "created_at", "updated_at"):
        row[name] = _required(r.get(name), name)
    for name in ("valid_to", "expires_at", "retired_at"):
        row[name] = _time(r.get(name), name)
    changes = [_change(c) for c in r.get("changes") or []]
    return row, changes


def _change(c: Any) -> StatusChange:
    if not isinstance(c, dict):
        raise InvalidInput("a status change is not an object")
    before = c.get("from_status")
    at = _required(c.get("at"), "at")
    return StatusChange(
        0,
        None if before is None else _one_of(before, "from_status", STATUSES),
        _one_of(c.get("to_status"), "to_status", STATUSES),
        at,
        _text(c.get("why"), "why"),
        None,
        _time(c.get("recorded_at"), "recorded_at") or at,
    )


def _time(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"{name}={value!r}; use an ISO 8601 time or null")
    return parse_time(value, name)


def _required(value: Any, name: str) -> str:
    stored = _time(value, name)
    if stored is None:
        raise InvalidInput(f"{name} is missing; a fact's record always has it")
    return stored


def _one_of(value: Any, name: str, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name}={value!r}: use one of {', '.join(allowed)}")
    return choice(value, name, allowed)


def _words(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name}={value!r}; use text")
    return value


def _share(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput(f"{name}={value!r}; use a number from 0 to 1")
    return float(value)


#: The largest count or number of days a restore takes (a database integer holds 64 bits).
_MOST = 2**31


def _count(value: Any, name: str = "mention_count") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MOST:
        raise InvalidInput(f"{name}={value!r}; use a whole number from 1 to {_MOST:,}")
    return value


def _text(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"{name}={value!r}; use text or null")
    return value
