"""No placeholder id and no Python repr reaches any text a person or an agent reads.

The model is shown this run's new facts by negative placeholder ids (-1, -2, …) and may cite
them anywhere it writes words: a strategy's question, a user-model reading, the trajectory, an
arbitration's reason. After two sleeps against the scripted OpenAI-protocol server, every text
the profile holds is scanned: the snapshot, the portrait (trajectory, user model), the
strategies, the facts' timelines, the digests and the run report.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer

pytestmark = pytest.mark.engines

#: A placeholder as the model cites it, and what Python prints for lists, dicts and None.
PLACEHOLDER = re.compile(r"(\[|#|\bfacts? )-\d", re.IGNORECASE)
REPR = re.compile(r"\['|\{'|\bNone\b|\[\]|\{\}")


def heard(turns: list[int], texts: list[str], topic: str) -> dict[str, Any]:
    obs = [
        {"type": "statement", "topic": topic, "text": text, "about": "user", "turns": [turn]}
        for turn, text in zip(turns, texts, strict=True)
    ]
    return {"summary": texts[0], "tags": [topic], "observations": obs}


def texts(agent: Agent, report_lines: list[str]) -> dict[str, str]:
    """Every stored text a person or an agent reads, by where it lives."""
    p = agent.profile
    found = {f"report: {i}": line for i, line in enumerate(report_lines)}
    snap = p.snapshot()
    assert snap is not None
    found["snapshot"] = snap.text
    traj = p.trajectory()
    assert traj is not None
    for name in ("phase", "direction", "stability", "momentum"):
        found[f"trajectory.{name}"] = getattr(traj, name)
    for i, a in enumerate(traj.unstable_areas):
        found[f"trajectory.unstable_areas.{i}"] = str(a)
    for u in p.user_model():
        found[f"user model {u.dimension}"] = u.value
    for s in p.strategies(status=None):
        found[f"strategy {s.id} question"] = s.question
        found[f"strategy {s.id} why"] = s.resolved_why or ""
    for f in p.facts():
        found[f"fact {f.id}"] = f.value
        for i, ch in enumerate(p.timeline(f.id).changes):
            found[f"fact {f.id} change {i}"] = ch.why or ""
    for d in p.digests():
        found[f"digest {d.session_id}"] = d.summary
    return found


def test_no_placeholder_or_repr_reaches_any_text(agent: Agent, server: LLMServer) -> None:
    said = ["I run at dawn.", "Ran at six again today.", "Dawn run before work, as always."]
    ids = agent.say("s1", *(("user", s) for s in said))
    obs = ["The user runs at dawn", "The user ran at six", "The user runs before work"]
    server.script(heard(ids, obs, "sport"), step="extract")
    inferred = {
        "category": "habit",
        "value": "runs at dawn",
        "observations": [1, 2, 3],
        "question": "You run at dawn (fact -1), is that right? see [-1] and #-1",
    }
    server.script({"facts": [inferred]}, step="behaviour")
    city = {"observation": 1, "action": "new", "category": "city", "value": "lives in Lyon"}
    server.script({"decisions": [city]}, step="classify")
    server.script(
        {"dimensions": [{"dimension": "style", "value": "short, like fact -1 and #-2"}]},
        step="user_model",
    )
    first = agent.sleep().run()
    assert first.status == "done", first.lines()
    [dawn] = [f for f in agent.profile.facts() if f.value == "runs at dawn"]
    [clarify] = [s for s in agent.profile.strategies() if s.kind == "clarify"]
    assert clarify.question == (
        f"You run at dawn (fact {dawn.id}), is that right? see [{dawn.id}] and #{dawn.id}"
    )
    [style] = agent.profile.user_model()
    assert style.value.startswith(f"short, like fact {dawn.id} and #")

    agent.clock.advance(days=20)
    (t4,) = agent.say("s2", ("user", "I moved to Lille."))
    [lyon] = [f for f in agent.profile.facts() if f.value == "lives in Lyon"]
    server.script(heard([t4], ["The user moved to Lille"], "city"), step="extract")
    contra = {"observation": 1, "action": "contradict", "fact_id": lyon.id}
    contra["value"] = "lives in Lille"
    server.script({"decisions": [contra]}, step="classify")
    ruling = {"new_fact_id": -1, "decision": "accept_new", "why": "fact -1 is newer"}
    server.script({"decisions": [ruling]}, step="arbitrate")
    server.script(
        {"phase": "moved (#-1)", "direction": "north, see fact -1", "stability": "changing",
         "anchors": [-1], "unstable_areas": ["home", "fact -1"],
         "momentum": "[-1] then settling"},
        step="trajectory",
    )  # fmt: skip
    second = agent.sleep().run()
    assert second.status == "done", second.lines()
    assert "trajectory" in server.asked

    found = texts(agent, first.lines() + second.lines())
    bad = {k: v for k, v in found.items() if PLACEHOLDER.search(v) or REPR.search(v)}
    assert not bad, bad
    [lille] = [f for f in agent.profile.facts() if f.value == "lives in Lille"]
    traj = agent.profile.trajectory()
    assert traj is not None and traj.direction == f"north, see fact {lille.id}"
