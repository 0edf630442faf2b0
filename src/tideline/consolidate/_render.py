"""How facts, turns, people and the trajectory read in the pipeline's prompts."""

from __future__ import annotations

from tideline.consolidate._working import Working
from tideline.memory import Turn
from tideline.profile import Fact, event_line, person_line, trajectory_lines

__all__ = ["event_line", "fact_line", "person_line", "trajectory_text", "turn_line"]


def fact_line(f: Fact) -> str:
    """`[3] city: lives in Osaka — suspected, 2× mentioned, said 2023-05-08 … 2023-06-09`: the
    days are valid time, when it was first and last said."""
    who = "" if f.subject == "user" else f" (about {f.subject})"
    extra = f", {f.source_type}" if f.source_type != "stated" else ""
    first, last = f.valid_from[:10], f.last_seen_at[:10]
    said = f"said {first}" + (f" … {last}" if last != first else "")
    return (
        f"[{f.id}] {f.category}: {f.value}{who} — {f.status}, {f.mention_count}× mentioned"
        f"{extra}, {said}"
    )


def turn_line(t: Turn) -> str:
    who = t.speaker or t.role
    role = f" ({t.role})" if t.speaker and t.role != "user" else ""
    return f"[{t.id}] {t.ts[:16]} {who}{role}: {t.text}"


def trajectory_text(work: Working) -> list[str]:
    """The working trajectory for a prompt: anchors as `[id] category: value`."""
    return trajectory_lines(work.trajectory, work.facts, ids=True)
