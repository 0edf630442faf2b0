"""The snapshot (seed step 13): the memory the next conversation starts from (injection T0).

One renderer for every writer. Sleep's step 13 and a person's correction (`Profile.reject`,
`Profile.close`) both rebuild the snapshot from the rows as they stand inside their own write
transaction (`Changeset.rebuild_snapshot`), so T0 is never behind what the profile holds: a fact
rejected by hand leaves the identity block in the same commit.

What it holds: the live, unexpired facts heaviest first (`injection_weight`), the people, the
active events, the user model, the knowledge graph's edges between the facts shown, and the
trajectory. Only words and real ids reach the text: anchors read as their facts' values, unstable
areas as a list in words — never a placeholder id or a Python list.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tideline.clock import from_text, to_text
from tideline.profile._decay import injection_weight, is_expired
from tideline.profile._drafts import EventDraft
from tideline.profile._records import Edge, Event, Fact, Relationship, Trajectory, UserModelEntry

TRAJECTORY_KEYS = ("phase", "direction", "stability", "momentum", "unstable_areas", "anchors")


@dataclass(frozen=True)
class ProfileState:
    """The profile as it stands: what a snapshot is made of."""

    now: dt.datetime
    facts: Sequence[Fact]
    people: Sequence[Relationship]
    events: Sequence[Event]
    user_model: Sequence[UserModelEntry]
    edges: Sequence[Edge]
    trajectory: Trajectory | None


def _section(title: str, lines: Sequence[str]) -> str:
    return f"## {title}\n" + "\n".join(lines)


def _who(fact: Fact) -> str:
    return {"user": "About the user", "self": "About me (the agent)"}.get(
        fact.subject, f"About {fact.subject}"
    )


def person_line(r: Relationship) -> str:
    """`Mia — sister [engaged]: bakes bread (3× mentioned)`."""
    rel = f" — {r.relation}" if r.relation else ""
    details = f": {r.details}" if r.details else ""
    status = f" [{r.status}]" if r.status not in ("", "active") else ""
    return f"{r.name}{rel}{status}{details} ({r.mention_count}× mentioned)"


def event_line(e: Event | EventDraft) -> str:
    return e.title + (f": {e.details}" if e.details else "")


def trajectory_lines(
    trajectory: Mapping[str, Any] | None, facts: Mapping[int, Fact], *, ids: bool = False
) -> list[str]:
    """The trajectory in words. Anchors are the facts they name (`[id] ` in front when `ids`:
    prompts cite facts by id); an anchor whose fact is unknown or gone is left out."""
    if not trajectory:
        return []
    out = []
    for key in TRAJECTORY_KEYS:
        value = trajectory.get(key)
        if key == "anchors":
            named = [facts[a] for a in value or [] if isinstance(a, int) and a in facts]
            value = "; ".join(
                (f"[{f.id}] " if ids else "") + f"{f.category}: {f.value}" for f in named
            )
        elif isinstance(value, list | tuple):
            value = "; ".join(str(v).strip() for v in value if str(v).strip())
        if value:
            out.append(f"{key.replace('_', ' ')}: {value}")
    return out


def render_snapshot(state: ProfileState, title: str | None = None) -> tuple[str, dict[str, Any]]:
    """The snapshot as text (T0) and as JSON; `title` replaces its first line's heading."""
    now = state.now
    facts = [f for f in state.facts if f.active and not is_expired(f, now)]
    weight = {f.id: injection_weight(f, now) for f in facts}
    facts.sort(key=lambda f: (-weight[f.id], -f.mention_count, f.id))
    by_id = {f.id: f for f in facts}
    events = [
        e
        for e in state.events
        if e.status == "active" and not (e.expires_at and from_text(e.expires_at) <= now)
    ]
    edges = sorted(
        (e for e in state.edges if e.removed_at is None and {e.from_fact, e.to_fact} <= set(by_id)),
        key=lambda e: (e.kind, e.from_fact, e.to_fact),
    )
    model = sorted(state.user_model, key=lambda u: u.dimension)
    trajectory = state.trajectory.to_dict() if state.trajectory else None

    groups: dict[str, list[str]] = {}
    for f in facts:
        how = f"{f.status}, disputed" if f.disputed_by else f.status
        groups.setdefault(_who(f), []).append(f"- {f.category}: {f.value} ({how})")
    text = [f"# {title or f'What I know (snapshot {to_text(now)[:10]})'}"]
    text += [_section(title, lines) for title, lines in groups.items()]
    parts = (
        ("People", [f"- {person_line(r)}" for r in state.people]),
        ("Active events", [f"- {event_line(e)}" for e in events]),
        ("Communication style", [f"- {u.dimension}: {u.value}" for u in model]),
        (
            "Connections",
            [f"- {by_id[e.from_fact].value} —{e.kind}→ {by_id[e.to_fact].value}" for e in edges],
        ),
        ("Trajectory", trajectory_lines(trajectory, by_id)),
    )
    text += [_section(title, lines) for title, lines in parts if lines]
    data = {
        "facts": [
            {"id": f.id, "subject": f.subject, "category": f.category, "value": f.value,
             "status": f.status, "disputed_by": f.disputed_by, "weight": round(weight[f.id], 3)}
            for f in facts
        ],
        "user_model": {u.dimension: u.value for u in model},
        "events": [event_line(e) for e in events],
        "relationships": [r.to_dict() for r in state.people],
        "edges": [{"kind": e.kind, "from": e.from_fact, "to": e.to_fact} for e in edges],
        "trajectory": trajectory,
    }  # fmt: skip
    return "\n\n".join(text), data
