"""The profile read back from a Tideline export (`tideline import` of a backup): facts, the
edges between them, events and people.

Each fact comes back as it was — status, confidence, counters, both clocks, its timeline of
status changes and its evidence — under a new id, with `supersedes` and `merged_into` pointing
at the new ids. Evidence names its turn by hash (`Profile.dump`), found here by hash: the same
file restores the sessions first. Evidence through an observation only is left out and counted:
observations are not restored. A fact already here (same subject, category, value and record
time) is not added again, so restoring twice adds nothing. Edges follow their facts to the new
ids; events and people come back as they were (an event already here — same title, start and
record time — or a person already known by name is not added again). Every field is checked
against the rules the database keeps; a record that breaks one is a problem naming its line,
left out. Observations, strategies and the portrait are not restored: the caller counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tideline.clock import parse_time
from tideline.errors import InvalidInput
from tideline.memory import ImportProblem, RestoredRecords
from tideline.profile._apply import Stores
from tideline.profile._changeset import TrajectoryFields
from tideline.profile._dedupe import normalise
from tideline.profile._drafts import MAX_NAME, MAX_TEXT, FactDraft, choice
from tideline.profile._facts import FactStore
from tideline.profile._mentions import person_key
from tideline.profile._observations import ObservationStore
from tideline.profile._people import RelationshipStore
from tideline.profile._portrait import PortraitStore
from tideline.profile._records import (
    EDGE_KINDS,
    EVENT_STATUSES,
    OBSERVATION_TYPES,
    POLARITIES,
    SOURCE_TYPES,
    STATUSES,
    STRATEGY_KINDS,
    STRATEGY_OUTCOMES,
    STRATEGY_STATUSES,
    Edge,
    Event,
    Observation,
    Relationship,
    StatusChange,
    Strategy,
)

#: The kinds of profile record a restore takes, in the order they are put back.
RESTORED_KINDS = (
    "observation", "fact", "edge", "event", "relationship", "strategy", "user_model", "trajectory",
)  # fmt: skip


def restore_profile(
    stores: Stores,
    records: Sequence[Mapping[str, Any]],
    turn_ids: Callable[[list[str]], dict[str, int]],
    sessions: Callable[[list[int]], dict[int, int]],
    now: str,
) -> RestoredRecords:
    """Insert the profile records of an export (inside the caller's transaction)."""
    done = RestoredRecords()
    by_kind: dict[str, list[Mapping[str, Any]]] = {k: [] for k in RESTORED_KINDS}
    for r in records:
        kind = str(r.get("type"))
        if kind in by_kind:
            by_kind[kind].append(r)
        elif kind == "snapshot":
            done.not_restored["snapshot records (rebuilt from the restored facts)"] += 1
        else:
            done.not_restored[f"{kind} records (not restored)"] += 1
    hashes = {h for kind in ("fact", "observation") for r in by_kind[kind] for h in _hashes(r)}
    found = turn_ids(sorted(hashes))
    seen = _observations(stores.observations, by_kind["observation"], found, sessions, done)
    fact_ids = _facts(stores.facts, by_kind["fact"], found, seen, now, done)
    for r in by_kind["edge"]:
        _one(done, r, lambda r: stores.edges.restore(_edge(r, fact_ids)))
    for r in by_kind["event"]:
        _one(done, r, lambda r: stores.events.restore(_event(r)))
    for r in by_kind["relationship"]:
        _one(done, r, lambda r: _person(stores.people, r))
    for r in by_kind["strategy"]:
        _one(done, r, lambda r: stores.strategies.restore(_strategy(r, fact_ids)))
    for r in by_kind["user_model"]:
        _one(done, r, lambda r: _reading(stores.portrait, r, fact_ids))
    for r in by_kind["trajectory"]:
        _one(done, r, lambda r: _trajectory(stores.portrait, r, fact_ids))
    return done


def _observations(
    store: ObservationStore,
    records: Sequence[Mapping[str, Any]],
    found: Mapping[str, int],
    sessions: Callable[[list[int]], dict[int, int]],
    done: RestoredRecords,
) -> dict[Any, int]:
    """Restore the observations; returns their ids in the file → their ids here."""
    ids: dict[Any, int] = {}
    for r in records:

        def put(r: Mapping[str, Any]) -> bool:
            turns = [found[h] for h in _hashes(r) if h in found]
            o = Observation(
                0,
                # this home's session of its first turn, if it named one where it was made
                sessions(turns[:1]).get(turns[0]) if turns and r.get("session_id") else None,
                turns,
                _one_of(r.get("observation_type"), "observation_type", OBSERVATION_TYPES),
                (_text(r.get("topic"), "topic") or "")[:MAX_NAME],
                _words(r.get("text"), "text")[:MAX_TEXT],
                _words(r.get("about"), "about")[:MAX_NAME] or "user",
                r.get("processed") is True,
                None,
                _required(r.get("created_at"), "created_at"),
                _time(r.get("said_at"), "said_at"),
            )
            here = store.find(o.text, o.created_at)
            ids[r.get("id")] = here if here is not None else store.restore(o)
            return here is None

        _one(done, r, put)
    return ids


def _strategy(r: Mapping[str, Any], fact_ids: Mapping[Any, int]) -> Strategy:
    outcome = r.get("outcome")
    return Strategy(
        0,
        _one_of(r.get("kind"), "kind", STRATEGY_KINDS),
        _mapped(r.get("fact_id"), fact_ids),
        _words(r.get("question"), "question")[:MAX_TEXT] or "?",
        _one_of(r.get("status"), "status", STRATEGY_STATUSES),
        _required(r.get("created_at"), "created_at"),
        _required(r.get("updated_at"), "updated_at"),
        None if outcome is None else _one_of(outcome, "outcome", STRATEGY_OUTCOMES),
        _text(r.get("resolved_why"), "resolved_why"),
        _time(r.get("resolved_at"), "resolved_at"),
        valid_from=_time(r.get("valid_from"), "valid_from"),
        valid_to=_time(r.get("valid_to"), "valid_to"),
    )


def _reading(portrait: PortraitStore, r: Mapping[str, Any], fact_ids: Mapping[Any, int]) -> bool:
    """A user-model reading; it becomes the current one of its dimension."""
    dimension = _words(r.get("dimension"), "dimension")[:MAX_NAME]
    made_at = _required(r.get("made_at"), "made_at")
    if portrait.has_reading(dimension, made_at):
        return False
    evidence = r.get("evidence")
    cited = (
        [fact_ids[e] for e in evidence if _known(e, fact_ids)] if isinstance(evidence, list) else []
    )
    portrait.set_dimension(
        dimension,
        _words(r.get("value"), "value")[:MAX_TEXT],
        cited,
        valid_at=_time(r.get("valid_at"), "valid_at") or made_at,
        now=made_at,
        run_id=None,
    )
    return True


def _trajectory(portrait: PortraitStore, r: Mapping[str, Any], fact_ids: Mapping[Any, int]) -> bool:
    made_at = _required(r.get("made_at"), "made_at")
    if portrait.has_trajectory(made_at):
        return False
    since = r.get("sessions_since") or 0
    fields: TrajectoryFields = {
        "phase": _short(r.get("phase"), "phase"),
        "direction": _short(r.get("direction"), "direction"),
        "stability": _short(r.get("stability"), "stability"),
        "momentum": _short(r.get("momentum"), "momentum"),
        "anchors": [_anchor(a, fact_ids) for a in _items(r.get("anchors"))],
        "unstable_areas": _items(r.get("unstable_areas")),
        "sessions_since": _count(since, "sessions_since") if since else 0,
    }
    portrait.add_trajectory(
        fields, valid_at=_time(r.get("valid_at"), "valid_at") or made_at, now=made_at, run_id=None
    )
    return True


def _short(value: Any, name: str) -> str:
    return (_text(value, name) or "")[:MAX_TEXT]


def _items(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, str | int | dict)] if isinstance(value, list) else []


def _anchor(a: Any, fact_ids: Mapping[Any, int]) -> Any:
    """An anchor names a fact by id (or `{"fact_id": n, …}`): this home's id; text stays."""
    if isinstance(a, int) and not isinstance(a, bool):
        return fact_ids.get(a, a)
    if isinstance(a, dict) and _known(a.get("fact_id"), fact_ids):
        return {**a, "fact_id": fact_ids[a["fact_id"]]}
    return a


def _one(
    done: RestoredRecords, r: Mapping[str, Any], put: Callable[[Mapping[str, Any]], bool]
) -> None:
    """Put one record back, counting it; a broken one becomes a problem."""
    kind = str(r.get("type"))
    try:
        added = put(r)
    except InvalidInput as exc:
        done.problems.append(ImportProblem(r.get("_line"), f"{_which(r)}: {exc}"))
        return
    (done.added if added else done.existing)[kind] += 1


def _facts(
    facts: FactStore,
    records: Sequence[Mapping[str, Any]],
    found: Mapping[str, int],
    observation_ids: Mapping[Any, int],
    now: str,
    done: RestoredRecords,
) -> dict[Any, int]:
    """Restore the facts; returns their ids in the file → their ids here (new or found)."""
    here = {_identity(f.subject, f.category, f.value, f.created_at): f.id for f in facts.list()}
    new_ids: dict[Any, int] = {}
    links: list[tuple[int, Any, Any]] = []
    for r in records:
        try:
            row, changes = _checked(r)
        except InvalidInput as exc:
            done.problems.append(ImportProblem(r.get("_line"), f"{_which(r)}: {exc}"))
            continue
        key = _identity(row["subject"], row["category"], row["value"], row["created_at"])
        if key in here:
            new_ids[r.get("id")] = here[key]
            done.existing["fact"] += 1
            continue
        fid = here[key] = new_ids[r.get("id")] = facts.restore(row, changes)
        links.append((fid, r.get("supersedes"), r.get("merged_into")))
        for ev in r.get("evidence") or []:
            hashed = ev.get("turn") if isinstance(ev, dict) else None
            turn = found.get(hashed) if isinstance(hashed, str) else None
            seen = (
                _mapped(ev.get("observation_id"), observation_ids) if isinstance(ev, dict) else None
            )
            if (turn is None and seen is None) or not _evidence_ok(ev):
                done.evidence_left_out += 1
                continue
            facts.add_evidence(
                fid,
                turn_id=turn,
                observation_id=seen,
                polarity=ev["polarity"],
                said_at=_time(ev.get("said_at"), "said_at"),
                now=_time(ev.get("created_at"), "created_at") or now,
            )
        done.added["fact"] += 1
    for fid, supersedes, merged_into in links:
        if _known(supersedes, new_ids) or _known(merged_into, new_ids):
            facts.restore_links(fid, _mapped(supersedes, new_ids), _mapped(merged_into, new_ids))
    return new_ids


def _which(r: Mapping[str, Any]) -> str:
    """How a problem names a record: "fact #3", or "a fact record" when it has no id."""
    kind, number = str(r.get("type")), r.get("id")
    if isinstance(number, int):
        return f"{kind} #{number}"
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} record"


def _known(old: Any, new_ids: Mapping[Any, int]) -> bool:
    return isinstance(old, int) and old in new_ids


def _mapped(old: Any, new_ids: Mapping[Any, int]) -> int | None:
    return new_ids[old] if _known(old, new_ids) else None


def _edge(r: Mapping[str, Any], fact_ids: Mapping[Any, int]) -> Edge:
    ends = [_mapped(r.get(name), fact_ids) for name in ("from_fact", "to_fact")]
    if ends[0] is None or ends[1] is None or ends[0] == ends[1]:
        raise InvalidInput("it joins facts that are not in this file (or a fact to itself)")
    return Edge(
        0,
        _one_of(r.get("kind"), "kind", EDGE_KINDS),
        ends[0],
        ends[1],
        _required(r.get("created_at"), "created_at"),
        _time(r.get("removed_at"), "removed_at"),
        _time(r.get("valid_from"), "valid_from"),
        _time(r.get("valid_to"), "valid_to"),
    )


def _event(r: Mapping[str, Any]) -> Event:
    start = _required(r.get("valid_from"), "valid_from")
    importance = _count(r.get("importance"), "importance")
    if importance > 5:
        raise InvalidInput(f"importance={importance}; use 1–5")
    return Event(
        0,
        _words(r.get("title"), "title")[:MAX_NAME] or "-",
        (_text(r.get("details"), "details") or "")[:MAX_TEXT],
        importance,
        None if r.get("decay_days") is None else _count(r["decay_days"], "decay_days"),
        start,
        max(_time(r.get("valid_to"), "valid_to") or start, start),  # a range never ends early
        _time(r.get("expires_at"), "expires_at"),
        _one_of(r.get("status"), "status", EVENT_STATUSES),
        _time(r.get("closed_at"), "closed_at"),
        _required(r.get("created_at"), "created_at"),
        _time(r.get("said_at"), "said_at") or start,
        (_text(r.get("phrase"), "phrase") or "")[:MAX_NAME],
        _time(r.get("retired_at"), "retired_at"),
    )


def _person(people: RelationshipStore, r: Mapping[str, Any]) -> bool:
    name = _words(r.get("name"), "name").strip()[:MAX_NAME]
    if not name:
        raise InvalidInput("name is empty")
    if people.find(person_key(name)) is not None:
        return False
    history = r.get("history")
    first = _required(r.get("first_seen_at"), "first_seen_at")
    last = _required(r.get("last_seen_at"), "last_seen_at")
    person = Relationship(
        0,
        name,
        (_text(r.get("relation"), "relation") or "")[:MAX_NAME],
        (_text(r.get("details"), "details") or "")[:MAX_TEXT],
        _count(r.get("mention_count")),
        _words(r.get("status"), "status")[:MAX_NAME] or "active",
        [h for h in history if isinstance(h, dict)] if isinstance(history, list) else [],
        first,
        last,
        _time(r.get("created_at"), "created_at") or first,
        _time(r.get("updated_at"), "updated_at") or last,
    )
    people.save(person, person_key(name))
    return True


def _identity(subject: str, category: str, value: str, created_at: str) -> tuple[str, ...]:
    return normalise(subject), normalise(category), normalise(value), created_at


def _hashes(r: Mapping[str, Any]) -> list[str]:
    """The turn hashes a fact's evidence or an observation names."""
    if r.get("type") == "observation":
        turns = r.get("turns")
        return [t for t in turns if isinstance(t, str)] if isinstance(turns, list) else []
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
