"""Strategies end (seed steps 3, 4, 8): a later sleep sees the answer, a retired fact makes its
questions obsolete, an unanswered one expires — and none is ever offered about a closed fact."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer
from tideline.clock import from_text, to_text
from tideline.profile import STRATEGY_DAYS, FactDraft, Strategy

pytestmark = pytest.mark.engines


def heard(turn: int, text: str, topic: str = "job") -> dict[str, Any]:
    obs = {"type": "statement", "topic": topic, "text": text, "about": "user", "turns": [turn]}
    return {"summary": text, "tags": [topic], "observations": [obs]}


def new(category: str, value: str, **kw: Any) -> dict[str, Any]:
    return {"decisions": [{"observation": 1, "action": "new", "category": category,
                           "value": value, **kw}]}  # fmt: skip


def ended(agent: Agent) -> dict[int, Strategy]:
    return {s.id: s for s in agent.profile.strategies(status="resolved")}


def expiry_changes(report: Any) -> dict[str, int]:
    return dict(next(s for s in report.steps if s.name == "expiry").changes)


def test_a_probe_is_answered_when_a_later_sleep_hears_its_fact_again(
    agent: Agent, server: LLMServer
) -> None:
    (t1,) = agent.say("s1", ("user", "I started as a nurse."))
    server.script(heard(t1, "The user is a nurse"), step="extract")
    server.script(new("job", "nurse"), step="classify")
    assert agent.sleep().run().status == "done"
    [nurse] = agent.profile.facts()
    [probe] = agent.profile.strategies()
    assert (probe.kind, probe.fact_id, probe.outcome) == ("probe", nurse.id, None)

    agent.clock.advance(days=3)
    (t2,) = agent.say("s2", ("user", "Night shift at the hospital again."))
    server.script(heard(t2, "The user works night shifts as a nurse"), step="extract")
    server.script(
        {"decisions": [{"observation": 1, "action": "support", "fact_id": nurse.id}]},
        step="classify",
    )
    report = agent.sleep().run()

    assert report.status == "done", report.lines()
    answer = ended(agent)[probe.id]
    assert (answer.outcome, answer.resolved_why) == ("answered", f"heard again (turn {t2})")
    assert answer.resolved_at == "2026-01-04T09:00:00Z"
    assert expiry_changes(report)["answered"] == 1
    assert agent.profile.strategies() == []  # nothing left to ask


@pytest.mark.parametrize(
    ("said", "why"),
    [("lives in Tokyo", "still true"), ("lives in Osaka", "changed: lives in Osaka")],
)
def test_a_verify_is_answered_by_what_the_user_says_of_the_expired_fact(
    agent: Agent, server: LLMServer, said: str, why: str
) -> None:
    cs = agent.profile.read().changeset()
    cs.add_fact(FactDraft("user", "city", "lives in Tokyo", decay_days=3))
    agent.profile.apply(cs)
    agent.clock.advance(days=5)
    first = agent.sleep().run()  # no conversation: the fact expires, a verify asks after it
    assert first.status == "done" and expiry_changes(first)["verify"] == 1
    [verify] = agent.profile.strategies()
    assert verify.kind == "verify" and agent.profile.fact(verify.fact_id).status == "closed"
    assert [q.id for q in agent.profile.questions()] == [verify.id]  # verify asks after it

    agent.clock.advance(days=1)
    (turn,) = agent.say("s1", ("user", f"About where I am: {said}."))
    server.script(heard(turn, f"The user {said}", topic="city"), step="extract")
    server.script(new("city", said), step="classify")
    report = agent.sleep().run()

    assert report.status == "done", report.lines()
    [answer] = ended(agent).values()
    [now] = agent.profile.facts(category="city", status="suspected")
    assert (answer.id, answer.outcome) == (verify.id, "answered")
    assert answer.resolved_why == f"answered by #{now.id}: {why}"  # the real id, never -1
    assert expiry_changes(report)["answered"] == 1


def test_an_unanswered_question_expires(agent: Agent, server: LLMServer) -> None:
    (t1,) = agent.say("s1", ("user", "I started as a nurse."))
    server.script(heard(t1, "The user is a nurse"), step="extract")
    server.script(new("job", "nurse", decay_days=None), step="classify")
    assert agent.sleep().run().status == "done"
    [probe] = agent.profile.strategies()

    agent.clock.advance(days=STRATEGY_DAYS - 1)
    assert agent.sleep().run().status == "nothing"  # one day short: it stands
    assert agent.profile.strategies() == [probe]
    agent.clock.advance(days=30)  # the next sleep comes a month late
    report = agent.sleep().run()

    assert expiry_changes(report)["expired"] == 1
    gone = ended(agent)[probe.id]
    assert (gone.outcome, gone.resolved_why) == ("expired", "unanswered for 90 days")
    assert agent.profile.questions() == []
    lapsed = from_text(probe.valid_from or "") + dt.timedelta(days=STRATEGY_DAYS)
    assert gone.valid_to == to_text(lapsed)  # it lapsed then, in the user's time
    assert gone.resolved_at == to_text(agent.clock())  # recorded by this late sleep


def test_a_fact_closed_by_arbitration_takes_its_probe_with_it(
    agent: Agent, server: LLMServer
) -> None:
    (t1,) = agent.say("s1", ("user", "I live in Tokyo."))
    server.script(heard(t1, "The user lives in Tokyo", topic="city"), step="extract")
    server.script(new("city", "lives in Tokyo"), step="classify")
    agent.sleep().run()
    [tokyo] = agent.profile.facts()
    [probe] = agent.profile.strategies()

    (t2,) = agent.say("s2", ("user", "I moved to Osaka."))
    server.script(heard(t2, "The user moved to Osaka", topic="city"), step="extract")
    contra = {"observation": 1, "action": "contradict", "fact_id": tokyo.id, "value": "Osaka"}
    server.script({"decisions": [contra]}, step="classify")
    server.script({"decisions": [{"new_fact_id": -1, "decision": "accept_new"}]}, step="arbitrate")
    report = agent.sleep().run()

    assert expiry_changes(report)["obsolete"] == 1
    assert report.applied["StrategyObsolete"] == 1
    gone = ended(agent)[probe.id]
    [osaka] = agent.profile.facts(status="suspected")
    assert gone.outcome == "obsolete"
    assert gone.resolved_why == f"fact #{tokyo.id} closed: superseded by #{osaka.id}: arbitration"
    assert [q.fact_id for q in agent.profile.questions()] == [osaka.id]


def test_a_lapsed_question_is_never_offered_even_before_a_sleep_settles_it(
    agent: Agent, server: LLMServer
) -> None:
    (t1,) = agent.say("s1", ("user", "I started as a nurse."))
    server.script(heard(t1, "The user is a nurse"), step="extract")
    server.script(new("job", "nurse", decay_days=None), step="classify")
    assert agent.sleep().run().status == "done"
    [probe] = agent.profile.questions()

    agent.clock.advance(days=STRATEGY_DAYS - 1)
    assert agent.profile.questions() == [probe]
    agent.clock.advance(days=2)  # lapsed, and no sleep since: still open, never offered
    assert agent.profile.strategies() == [probe] and agent.profile.questions() == []
