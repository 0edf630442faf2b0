"""How facts, turns, people and the trajectory read in prompts and in the snapshot text."""

from __future__ import annotations

from tideline.memory import Turn
from tideline.profile import Fact, Relationship


def fact_line(f: Fact) -> str:
    who = "" if f.subject == "user" else f" (about {f.subject})"
    extra = f", {f.source_type}" if f.source_type != "stated" else ""
    return (
        f"[{f.id}] {f.category}: {f.value}{who} — {f.status}, {f.mention_count}× mentioned{extra}"
    )


def turn_line(t: Turn) -> str:
    who = t.speaker or t.role
    role = f" ({t.role})" if t.speaker and t.role != "user" else ""
    return f"[{t.id}] {t.ts[:16]} {who}{role}: {t.text}"


def person_line(r: Relationship) -> str:
    rel = f" — {r.relation}" if r.relation else ""
    details = f": {r.details}" if r.details else ""
    status = f" [{r.status}]" if r.status not in ("", "active") else ""
    return f"{r.name}{rel}{status}{details} ({r.mention_count}× mentioned)"


def trajectory_lines(t: dict[str, object] | None) -> list[str]:
    if not t:
        return []
    keys = ("phase", "direction", "stability", "momentum", "unstable_areas", "anchors")
    return [f"{k}: {t[k]}" for k in keys if t.get(k)]
