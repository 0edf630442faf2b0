"""The seed's example: "lives in Tokyo", then "moved to Osaka" → a disputed pair → arbitration
closes the old fact with its end time; stated twice → confirmed by the fast path."""

from __future__ import annotations

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer

pytestmark = pytest.mark.engines


WHY = "moved: fact -1 is newer than #{old}"  # the model cites the new fact by its placeholder


def extraction(turn: int, text: str, type_: str = "statement") -> dict[str, object]:
    obs = {"type": type_, "topic": "city", "text": text, "about": "user", "turns": [turn]}
    return {"summary": text, "tags": ["city"], "observations": [obs]}


def test_tokyo_then_osaka_closes_tokyo_with_its_end_time(agent: Agent, server: LLMServer) -> None:
    (t1, _) = agent.say("s1", ("user", "I live in Tokyo."), ("assistant", "Nice city!"))
    server.script(extraction(t1, "The user lives in Tokyo"), step="extract")
    new = {"observation": 1, "action": "new", "category": "city", "value": "lives in Tokyo"}
    server.script({"decisions": [new]}, step="classify")
    first = agent.sleep().run()
    assert first.status == "done", first.lines()
    [tokyo] = agent.profile.facts()
    assert (tokyo.value, tokyo.status, tokyo.evidence[0].turn_id) == (
        "lives in Tokyo",
        "suspected",
        t1,
    )

    agent.clock.advance(days=30)
    (t3,) = agent.say("s2", ("user", "I moved to Osaka last month."))
    moved = extraction(t3, "The user moved to Osaka", "contradiction")
    moved["events"] = [{"title": "moved to Osaka", "importance": 4, "turns": [t3]}]
    server.script(moved, step="extract")
    contra = {
        "observation": 1,
        "action": "contradict",
        "fact_id": tokyo.id,
        "value": "lives in Osaka",
    }
    server.script({"decisions": [contra]}, step="classify")
    server.script(
        {
            "decisions": [
                {"new_fact_id": -1, "decision": "accept_new", "why": WHY.format(old=tokyo.id)}
            ]
        },
        step="arbitrate",
    )
    trajectory = {
        "phase": "relocated, see #-1",
        "stability": "changing",
        "anchors": [-1, 999],
        "unstable_areas": ["home", "friends"],
    }
    server.script(trajectory, step="trajectory")
    second = agent.sleep().run()
    assert second.status == "done", second.lines()
    assert "arbitrate" in server.asked and "trajectory" in server.asked  # settled + 2 sessions
    [asked] = [
        c for c in server.chats if "where a user's life stands" in c["messages"][0]["content"]
    ]
    assert "## Active events\n- moved to Osaka" in asked["messages"][1]["content"]  # as promised

    old = agent.profile.fact(tokyo.id)
    [osaka] = [f for f in agent.profile.facts() if f.value == "lives in Osaka"]
    assert old.status == "closed" and old.valid_to == osaka.valid_from == "2026-01-31T09:00:00Z"
    assert osaka.supersedes == tokyo.id and osaka.status == "suspected"
    traj = agent.profile.trajectory()
    assert traj is not None and traj.anchors == [osaka.id]
    assert traj.phase == f"relocated, see #{osaka.id}"  # the model's words, with real ids
    assert [e.turn_id for e in osaka.evidence] == [t3]
    timeline = agent.profile.timeline(osaka.id)
    assert [f.value for f in timeline.chain] == ["lives in Tokyo", "lives in Osaka"]
    [open_probe] = agent.profile.strategies()
    assert (open_probe.kind, open_probe.fact_id) == ("probe", osaka.id)
    [ended] = agent.profile.strategies(status="resolved")  # Tokyo's probe: its fact is gone
    assert (ended.fact_id, ended.outcome) == (tokyo.id, "obsolete")
    moved = f"moved: fact {osaka.id} is newer than #{tokyo.id}"
    assert ended.resolved_why == f"fact #{tokyo.id} closed: superseded by #{osaka.id}: {moved}"
    assert agent.profile.read().processed == {1: t1 + 1, 2: t3}
    snap = agent.profile.snapshot()
    assert snap is not None and "lives in Osaka" in snap.text and "lives in Tokyo" not in snap.text
    assert snap.data["facts"][0]["id"] == osaka.id
    # real ids and words only: the new fact's placeholder (-1) never reaches a text
    closing = [c for c in agent.profile.timeline(tokyo.id).changes if c.to_status == "closed"]
    assert [c.why for c in closing] == [f"superseded by #{osaka.id}: {moved}"]
    trajectory_text = snap.text.split("## Trajectory\n", 1)[1]
    assert "anchors: city: lives in Osaka" in trajectory_text
    assert "unstable areas: home; friends" in trajectory_text
    assert "-1" not in snap.text and "[" not in trajectory_text
    assert snap.data["trajectory"]["anchors"] == [osaka.id]
    run = agent.profile.runs()[0]
    assert run.status == "done" and run.prompt_versions["arbitrate"] == 2
    assert next(s for s in run.steps if s["name"] == "arbitrate")["prompt"] == "arbitrate@2"


def test_stated_twice_is_confirmed_by_the_fast_path(agent: Agent, server: LLMServer) -> None:
    (t1,) = agent.say("s1", ("user", "I am a nurse."))
    server.script(extraction(t1, "The user is a nurse"), step="extract")
    new = {"observation": 1, "action": "new", "category": "job", "value": "nurse"}
    server.script({"decisions": [new]}, step="classify")
    agent.sleep().run()
    [nurse] = agent.profile.facts()

    (t2,) = agent.say("s2", ("user", "Long shift at the hospital again, as a nurse."))
    server.script(extraction(t2, "The user works as a nurse"), step="extract")
    server.script(
        {"decisions": [{"observation": 1, "action": "support", "fact_id": nurse.id}]},
        step="classify",
    )
    report = agent.sleep().run()
    fact = agent.profile.fact(nurse.id)
    assert (fact.status, fact.mention_count, len(fact.evidence)) == ("confirmed", 2, 2)
    step5 = next(s for s in report.steps if s.name == "cross_validate")
    assert step5.changes["fast_path"] == 1
