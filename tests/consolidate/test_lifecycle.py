"""The lifecycle as the seed has it, on valid time: confirmed only across two sessions,
established when long-standing and well-evidenced, an established fact contradicted once
disputed (not closed) until a second session agrees, and confidence read from the evidence."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer
from tests.profile.conftest import move
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings
from tideline.errors import ConfigError
from tideline.profile import FactDraft, Rules

pytestmark = pytest.mark.engines


def heard(*said: tuple[int, str], topic: str = "job") -> dict[str, Any]:
    obs = [
        {"type": "statement", "topic": topic, "text": text, "about": "user", "turns": [turn]}
        for turn, text in said
    ]
    return {"summary": said[0][1], "tags": [topic], "observations": obs}


def decisions(*items: dict[str, Any]) -> dict[str, Any]:
    return {"decisions": [{"observation": n, **d} for n, d in enumerate(items, 1)]}


NEW_NURSE = {"action": "new", "category": "job", "value": "nurse", "decay_days": None}


def step(report: Any, name: str) -> Any:
    return next(s for s in report.steps if s.name == name)


def test_a_fact_said_twice_in_one_session_is_not_confirmed_until_a_second_session(
    agent: Agent, server: LLMServer
) -> None:
    t1, t2 = agent.say("s1", ("user", "I'm a nurse."), ("user", "Yes, a nurse, nights."))
    server.script(heard((t1, "The user is a nurse"), (t2, "The user is a nurse")), step="extract")
    server.script(decisions(NEW_NURSE, {"action": "support", "fact_id": -1}), step="classify")
    server.default("verify", {"verdicts": [{"fact_id": -1, "verdict": "confirm"}]})
    first = agent.sleep().run()

    [nurse] = agent.profile.facts()
    assert (nurse.mention_count, nurse.sessions, nurse.status) == (2, 1, "suspected")
    validate = step(first, "cross_validate")
    assert (validate.changes["fast_path"], validate.changes["checked"]) == (0, 0)
    assert validate.note == "1 backed by fewer than 2 sessions wait for another"
    assert "verify" not in server.asked  # the LLM is not asked to confirm one session's word

    agent.clock.advance(days=2)
    (t3,) = agent.say("s2", ("user", "Back at the hospital tonight."))
    server.script(heard((t3, "The user works at a hospital as a nurse")), step="extract")
    server.script(decisions({"action": "support", "fact_id": nurse.id}), step="classify")
    second = agent.sleep().run()

    fact = agent.profile.fact(nurse.id)
    assert (fact.status, fact.sessions) == ("confirmed", 2)
    assert step(second, "cross_validate").changes["fast_path"] == 1
    [change] = [c for c in agent.profile.timeline(nurse.id).changes if c.to_status == "confirmed"]
    assert change.why == "stated in 2 sessions"


def imported(agent: Agent, server: LLMServer, when: tuple[str, ...]) -> Any:
    """One session per timestamp, each saying the user is a nurse, slept on in one run."""
    turns = [
        agent.memory.sync_turn(f"s{n}", "user", f"Night shift again ({n}).", timestamp=ts).id
        for n, ts in enumerate(when, 1)
    ]
    for turn in turns:
        server.script(heard((turn, "The user works as a nurse")), step="extract")
    support = {"action": "support", "fact_id": -1}
    server.script(decisions(NEW_NURSE, *[support] * (len(when) - 1)), step="classify")
    return agent.sleep().run()


def test_a_year_of_sessions_imported_at_once_is_established_in_its_own_time(
    agent: Agent, server: LLMServer
) -> None:
    when = ("2023-05-08T10:00:00Z", "2023-06-20T10:00:00Z", "2023-08-30T10:00:00Z")
    report = imported(agent, server, when)  # months of the user's time, one afternoon of ours

    assert report.status == "done", report.lines()
    [nurse] = agent.profile.facts()
    assert (nurse.sessions, nurse.said_from, nurse.said_to) == (3, when[0], when[2])
    assert nurse.status == "established"  # 3 sessions over 114 days: long-standing
    assert step(report, "maturity").changes["established"] == 1
    [change] = [c for c in agent.profile.timeline(nurse.id).changes if c.to_status == "established"]
    assert change.why == "backed by 3 sessions over 114 days"


def test_three_sessions_within_the_span_are_not_established(
    agent: Agent, server: LLMServer
) -> None:
    when = ("2023-05-08T10:00:00Z", "2023-06-20T10:00:00Z", "2023-08-06T09:59:59Z")  # 89.99 d
    imported(agent, server, when)
    [nurse] = agent.profile.facts()
    assert (nurse.sessions, nurse.status) == (3, "confirmed")


def establish(agent: Agent, value: str = "lives in Tokyo") -> int:
    """An established fact, backed by three sessions a season apart."""
    turns = [
        agent.memory.sync_turn(f"old{n}", "user", value, timestamp=f"2025-0{n}-01T10:00:00Z").id
        for n in (1, 4, 7)
    ]
    cs = agent.profile.read().changeset()
    ref = cs.add_fact(FactDraft("user", "city", value, decay_days=None), turn_ids=(turns[0],))
    fid = agent.profile.apply(cs).ids[ref]
    cs = agent.profile.read().changeset()
    cs.support(fid, turn_ids=(turns[1],))
    cs.support(fid, turn_ids=(turns[2],))
    agent.profile.apply(cs)
    move(agent.profile, fid, "confirmed", "established")
    for sid in (1, 2, 3):  # already digested
        agent.profile.apply(_processed(agent, sid, turns[sid - 1]))
    return fid


def _processed(agent: Agent, session: int, turn: int) -> Any:
    cs = agent.profile.read().changeset()
    cs.session_processed(session, turn)
    return cs


def test_an_established_fact_contradicted_once_is_disputed_until_a_second_session_agrees(
    agent: Agent, server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    tokyo = establish(agent)
    (t1,) = agent.say("s1", ("user", "I moved to Osaka."))
    server.script(heard((t1, "The user moved to Osaka"), topic="city"), step="extract")
    contra = {"action": "contradict", "fact_id": tokyo, "value": "lives in Osaka"}
    server.script(decisions(contra), step="classify")
    server.script({"decisions": [{"new_fact_id": -1, "decision": "accept_new"}]}, step="arbitrate")
    first = agent.sleep().run()

    old = agent.profile.fact(tokyo)
    [osaka] = agent.profile.facts(category="city", status="suspected")
    assert old.status == "established" and old.disputed_by == [osaka.id]  # disputed, not closed
    arbitrate = step(first, "arbitrate")
    assert (arbitrate.changes["deferred"], arbitrate.changes["accept_new"]) == (1, 0)
    assert arbitrate.note == (
        f"established #{tokyo} stay(s), disputed, until a second session backs the new fact"
    )
    snap = agent.profile.snapshot()
    assert snap is not None and "- city: lives in Tokyo (established, disputed)" in snap.text
    monkeypatch.setenv("TIDELINE_HOME", str(agent.settings.home))  # the CLI opens this agent
    shown = CliRunner().invoke(cli, ["profile", "--category", "city"], catch_exceptions=False)
    assert f"#{tokyo} [established, disputed by #{osaka.id}] lives in Tokyo" in shown.stdout
    assert "1 mention(s) in 1 session(s)" in shown.stdout  # Osaka, so far

    agent.clock.advance(days=3)
    (t2,) = agent.say("s2", ("user", "Osaka is great, the flat is nearly unpacked."))
    server.script(heard((t2, "The user lives in Osaka"), topic="city"), step="extract")
    server.script(decisions({"action": "support", "fact_id": osaka.id}), step="classify")
    ruling = {"new_fact_id": osaka.id, "decision": "accept_new", "why": "moved"}
    server.script({"decisions": [ruling]}, step="arbitrate")
    second = agent.sleep().run()

    assert step(second, "arbitrate").changes["accept_new"] == 1
    closed = agent.profile.fact(tokyo)
    assert closed.status == "closed" and closed.valid_to == agent.profile.fact(osaka.id).valid_from
    assert agent.profile.fact(osaka.id).disputed_by == []


def test_confidence_is_read_from_the_sessions_for_and_against(
    agent: Agent, server: LLMServer
) -> None:
    (t1,) = agent.say("s1", ("user", "I'm a nurse."))
    server.script(heard((t1, "The user is a nurse")), step="extract")
    server.script(decisions({**NEW_NURSE, "confidence": 0.5}), step="classify")
    agent.sleep().run()
    [nurse] = agent.profile.facts()
    assert (nurse.confidence, nurse.prior) == (0.5, 0.5)

    agent.clock.advance(days=1)
    (t2,) = agent.say("s2", ("user", "Night shift at the ward."))
    server.script(heard((t2, "The user works night shifts as a nurse")), step="extract")
    server.script(decisions({"action": "support", "fact_id": nurse.id}), step="classify")
    agent.sleep().run()
    assert agent.profile.fact(nurse.id).confidence == 0.6667  # (2·0.5 + 1) / (2 + 1)

    agent.clock.advance(days=1)
    (t3,) = agent.say("s3", ("user", "I might quit nursing, I'm not sure it's me."))
    server.script(heard((t3, "The user doubts being a nurse")), step="extract")
    server.script(decisions({"action": "evidence_against", "fact_id": nurse.id}), step="classify")
    agent.sleep().run()
    fact = agent.profile.fact(nurse.id)
    assert (fact.against, fact.confidence) == (1, 0.5)  # (2·0.5 + 1) / (2 + 1 + 1): lower


def test_the_lifecycle_numbers_are_settings(engine_env: str) -> None:
    values = {"embedder": "none", "profile_established_sessions": 4, "profile_strategy_days": 30}
    app = Tideline(Settings.load(overrides=values))
    try:
        assert app.profile.rules == Rules(established_sessions=4, strategy_days=30.0)
    finally:
        app.close()
    with pytest.raises(ConfigError, match="profile_established_sessions=1: use a whole number"):
        Rules(established_sessions=1)
