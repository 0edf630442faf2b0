"""Step 4, classification, against scripted answers: what the model's words mean for the facts
it creates (a life of `null` days is forever), and what it cited that does not exist."""

from __future__ import annotations

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer

pytestmark = pytest.mark.engines


def observations(turn: int, *texts: str) -> dict[str, object]:
    obs = [
        {"type": "statement", "topic": "origin", "text": t, "about": "user", "turns": [turn]}
        for t in texts
    ]
    return {"summary": "where she comes from", "tags": ["origin"], "observations": obs}


def test_a_null_decay_never_expires_and_a_missing_one_gets_the_default(
    agent: Agent, server: LLMServer
) -> None:
    (turn,) = agent.say("s1", ("user", "I'm from Sweden, and this week I'm tired."))
    server.script(
        observations(turn, "The user is from Sweden", "The user is tired"), step="extract"
    )
    server.script(
        {
            "decisions": [
                {"observation": 1, "action": "new", "category": "origin", "value": "from Sweden",
                 "decay_days": None},
                {"observation": 2, "action": "new", "category": "mood", "value": "tired"},
            ]
        },
        step="classify",
    )  # fmt: skip
    assert agent.sleep().run().status == "done"

    facts = {f.category: f for f in agent.profile.facts()}
    assert (facts["origin"].decay_days, facts["origin"].expires_at) == (None, None)
    assert facts["mood"].decay_days == 90 and facts["mood"].expires_at is not None
    agent.clock.advance(days=400)  # long past any default life
    assert agent.sleep().run().status in ("done", "nothing")
    assert agent.profile.fact(facts["origin"].id).status == "suspected"
    assert agent.profile.fact(facts["mood"].id).status == "closed"


def test_turn_ids_the_model_invented_are_dropped_and_reported(
    agent: Agent, server: LLMServer
) -> None:
    (turn,) = agent.say("s1", ("user", "I'm from Sweden and moved to Lisbon in May."))
    answer = observations(turn, "The user is from Sweden")
    answer["observations"][0]["turns"] = [turn, 999]  # type: ignore[index]
    answer["events"] = [{"title": "moved to Lisbon", "turns": [12345]}]
    server.script(answer, step="extract")
    report = agent.sleep().run()
    assert report.status == "done", report.lines()

    [observation] = agent.profile.observations()
    assert observation.turn_ids == [turn]  # the real turn kept, the invented one dropped
    step = next(s for s in report.steps if s.name == "extract")
    assert step.changes["invented_turns"] == 2
    assert step.note == "dropped turn ids the model invented (s1: 999, 12345)"
    assert any("s1: 999, 12345" in line for line in report.lines())  # in the summary printed
    [run] = agent.profile.runs()
    recorded = next(s for s in run.steps if s["name"] == "extract")  # and in the run record
    assert recorded["changes"]["invented_turns"] == 2 and "999" in recorded["note"]
