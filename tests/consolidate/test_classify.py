"""Step 4, classification, against scripted answers: what the model's words mean for the facts
it creates (a life of `null` days is forever), and what it cited that does not exist."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer
from tideline.profile import ACTIVE_STATUSES

LIVE = list(ACTIVE_STATUSES)

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


ADOPTION = (
    ("2023-05-08T10:00:00Z", "We're researching adoption agencies.", "researching adoption"),
    ("2023-06-20T10:00:00Z", "We applied to adopt!", "applied to adopt"),
    ("2023-08-30T10:00:00Z", "We passed the adoption interviews.", "passed the interviews"),
)


def import_adoption(agent: Agent) -> list[int]:
    """Three sessions a season apart, imported newest first (their ids run backwards), slept
    on the night after the last (in the user's time: facts of 2023 slept on in 2026 expire)."""
    turns = {
        n: agent.memory.sync_turn(f"adoption-{n}", "user", said, timestamp=ts).id
        for n, (ts, said, _) in reversed(list(enumerate(ADOPTION, 1)))
    }
    agent.clock.set(dt.datetime(2023, 8, 31, 2, 0, tzinfo=dt.UTC))
    return [turns[n] for n in (1, 2, 3)]


def script_adoption(server: LLMServer, turns: list[int], rulings: list[dict[str, object]]) -> None:
    for turn, (_, said, _) in zip(turns, ADOPTION, strict=True):
        obs = {"type": "statement", "topic": "adoption", "text": said, "turns": [turn]}
        server.script(
            {"summary": said, "tags": ["adoption"], "observations": [obs]}, step="extract"
        )
    server.script(
        {"decisions": [
            {"observation": 1, "action": "new", "category": "adoption", "value": ADOPTION[0][2]},
            {"observation": 2, "action": "contradict", "earlier": 1, "value": ADOPTION[1][2]},
            {"observation": 3, "action": "contradict", "earlier": 2, "value": ADOPTION[2][2]},
        ]},
        step="classify",
    )  # fmt: skip
    server.script({"decisions": rulings}, step="arbitrate")


def test_sessions_of_one_run_contradict_one_another_in_the_users_time(
    agent: Agent, server: LLMServer
) -> None:
    turns = import_adoption(agent)
    accept = [{"new_fact_id": n, "decision": "accept_new", "why": "it moved on"} for n in (-3, -2)]
    script_adoption(server, turns, accept)  # the rulings come newest first

    report = agent.sleep().run()

    assert report.status == "done", report.lines()
    [asked] = [c for c in server.chats if "compare new observations" in c["messages"][0]["content"]]
    listed = asked["messages"][1]["content"].split("## Observations\n")[1].splitlines()
    assert [line[:15] for line in listed if not line.startswith(" ")] == [
        "1. [2023-05-08]",
        "2. [2023-06-20]",
        "3. [2023-08-30]",
    ]  # each followed by the user's own words behind it, dated
    assert listed[1] == "    2023-05-08 user: “We're researching adoption agencies.”"
    [live] = agent.profile.facts(category="adoption", status=LIVE)  # one, not three side by side
    assert live.value == "passed the interviews"
    chain = agent.profile.timeline(live.id).chain
    assert [(f.value, f.status) for f in chain] == [
        ("researching adoption", "closed"),
        ("applied to adopt", "closed"),
        ("passed the interviews", "suspected"),
    ]
    first, second, _ = chain
    assert first.valid_to == second.valid_from and second.valid_to == live.valid_from
    reasons = [c.why for c in agent.profile.timeline(live.id).changes if c.to_status == "closed"]
    assert reasons == [
        f"superseded by #{second.id}: it moved on",
        f"superseded by #{live.id}: it moved on",
    ]


def test_a_rejected_middle_link_leaves_the_newest_against_the_oldest(
    agent: Agent, server: LLMServer
) -> None:
    turns = import_adoption(agent)
    script_adoption(
        server,
        turns,
        [{"new_fact_id": -2, "decision": "reject_new", "why": "never applied"},
         {"new_fact_id": -3, "decision": "accept_new", "why": "interviews passed"}],
    )  # fmt: skip

    assert agent.sleep().run().status == "done"

    [live] = agent.profile.facts(category="adoption", status=LIVE)
    assert live.value == "passed the interviews"
    statuses = {f.value: f.status for f in agent.profile.facts(category="adoption")}
    assert statuses == {
        "researching adoption": "closed",
        "applied to adopt": "rejected",
        "passed the interviews": "suspected",
    }
