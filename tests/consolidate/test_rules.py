"""The rule steps through the whole pipeline: expiry, the maturity table at each boundary,
anchors −40 %, tool-only sessions, no LLM, dry run, one sleep at a time."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer
from tideline.clock import to_text
from tideline.consolidate import SleepBusy, StepEvent
from tideline.llm import NO_LLM, NO_LLM_NOTE
from tideline.profile import FactDraft

pytestmark = pytest.mark.engines


def seed_fact(
    agent: Agent, evidence: int = 1, *, age_days: float = 0, decay: int = 60, anchor: bool = False
) -> int:
    """A stated fact with `evidence` supporting turns, begun `age_days` ago."""
    turns = agent.say(
        "seed", *[("user", f"evidence {i} {age_days} {decay}") for i in range(evidence)]
    )
    start = to_text(agent.clock.now - dt.timedelta(days=age_days))
    cs = agent.profile.read().changeset()
    ref = cs.add_fact(
        FactDraft("user", "language", "speaks Japanese", decay_days=decay, valid_from=start),
        turn_ids=tuple(turns),
    )
    for t in turns:
        cs.session_processed(1, t)  # the seed turns are not a conversation to digest
    fid = agent.profile.apply(cs).ids[ref]
    if anchor:
        cs = agent.profile.read().changeset()
        cs.set_trajectory(phase="settled", anchors=[fid])
        agent.profile.apply(cs)
    return fid


def test_expired_fact_is_closed_with_a_verify_strategy(agent: Agent) -> None:
    fid = seed_fact(agent, decay=10)
    agent.clock.advance(days=10)
    report = agent.sleep(llm=False).run()
    fact = agent.profile.fact(fid)
    assert (fact.status, fact.valid_to) == ("closed", "2026-01-11T09:00:00Z")
    [verify] = agent.profile.strategies()
    assert (verify.kind, verify.fact_id) == ("verify", fid)
    changes = next(s for s in report.steps if s.name == "expiry").changes
    assert (changes["closed"], changes["verify"]) == (1, 1)


RUNGS = [(730, 10, 730), (365, 6, 365), (90, 3, 180)]


@pytest.mark.parametrize(("age", "evidence", "decay"), RUNGS)
def test_maturity_table_at_each_boundary(agent: Agent, age: int, evidence: int, decay: int) -> None:
    early = seed_fact(agent, evidence, age_days=age - 1 / 86400)
    short = seed_fact(agent, evidence - 1, age_days=age)
    exact = seed_fact(agent, evidence, age_days=age)
    agent.sleep(llm=False).run()
    got = {f: agent.profile.fact(f).decay_days for f in (early, short, exact)}
    assert got[exact] == decay
    assert got[early] != decay and got[short] != decay


def test_anchor_thresholds_are_40_percent_lower(agent: Agent) -> None:
    anchor = seed_fact(agent, 2, age_days=54, anchor=True)  # 90 × 0.6 = 54 d, 3 × 0.6 → 2
    plain = seed_fact(agent, 2, age_days=54)
    agent.sleep(llm=False).run()
    assert agent.profile.fact(anchor).decay_days == 180
    assert agent.profile.fact(plain).decay_days == 60


def test_tool_only_sessions_are_skipped_and_processed(agent: Agent, server: LLMServer) -> None:
    tool = agent.say("tool", ("assistant", "Running the build."), ("tool", "exit 0"))
    task = agent.say("task", ("user", "Translate 'hello' into French."), ("assistant", "Bonjour."))
    server.script({"tool_only": True}, step="extract")
    report = agent.sleep().run()
    assert server.asked.count("extract") == 1  # the rule skipped the first without asking
    assert agent.profile.read().processed == {1: tool[-1], 2: task[-1]}
    assert agent.profile.facts() == [] and agent.profile.observations() == []
    skipped = {d.session_id: d.skipped for d in agent.profile.digests()}
    assert skipped == {
        1: "tool-only: no user turns",
        2: "tool-only: the model found nothing personal",
    }
    assert next(s for s in report.steps if s.name == "extract").changes["skipped"] == 2


def test_without_an_llm_the_llm_steps_say_why_and_rules_still_run(agent: Agent) -> None:
    fid = seed_fact(agent, decay=5)
    agent.say("chat", ("user", "I started learning the cello."))
    agent.clock.advance(days=6)
    report = agent.sleep(llm=False).run()
    assert report.status == "skipped" and report.reason == NO_LLM.removeprefix("skipped: ")
    assert report.skipped["behaviour"] == report.skipped["classify"] == NO_LLM_NOTE
    assert "stay unprocessed" in report.skipped["extract"]
    assert agent.profile.fact(fid).status == "closed"  # expiry (a rule) ran, and was applied
    assert agent.profile.snapshot() is not None  # so did the snapshot
    assert 2 not in agent.profile.read().processed  # the conversation waits for an LLM
    assert sum("no LLM configured" in line for line in report.lines()) == 1  # said once
    assert agent.profile.runs()[0].status == "skipped"


def test_dry_run_applies_nothing(agent: Agent, server: LLMServer) -> None:
    seed_fact(agent, decay=5)
    (t,) = agent.say("chat", ("user", "I have a dog called Rex."))
    obs = {"type": "statement", "topic": "pets", "text": "The user has a dog", "turns": [t]}
    server.script(
        {"observations": [obs], "relationships": [{"name": "Rex", "relation": "dog"}]},
        step="extract",
    )
    agent.clock.advance(days=6)
    before = (agent.profile.counts(), agent.profile.version())
    report = agent.sleep().run(dry_run=True)
    assert report.status == "planned" and report.run_id is None
    assert (
        report.plan["NewFact"] == 1
        and report.plan["Transition"] == 1
        and report.plan["Mention"] == 1
    )
    assert (agent.profile.counts(), agent.profile.version()) == before


def test_a_second_sleep_says_so_and_exits(agent: Agent) -> None:
    seen: list[str] = []

    def inner(event: StepEvent) -> None:
        if event.name == "load" and event.phase == "start" and not seen:
            with pytest.raises(
                SleepBusy, match=r"another sleep is running .* only one runs at a time"
            ) as exc:
                agent.sleep(llm=False).run()
            seen.append(str(exc.value))

    assert agent.sleep(llm=False).run(progress=inner).status == "skipped"
    assert seen and "\n" not in seen[0]
    assert agent.sleep(llm=False).run().status == "skipped"  # the lock was released
