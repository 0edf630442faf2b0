"""LLM failure modes through the whole pipeline: a failing step applies nothing and leaves every
session unprocessed; a retried 429 or a repaired answer does not fail the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.consolidate.conftest import T0, Agent, state
from tests.llm_server import Answer, LLMServer, closed_url
from tests.profile.conftest import Clock

pytestmark = pytest.mark.engines

OBS = {"type": "statement", "topic": "city", "text": "The user lives in Kyoto", "turns": []}


def talk(agent: Agent) -> int:
    (t,) = agent.say("s1", ("user", "I live in Kyoto."))
    return t


def assert_nothing_applied(agent: Agent, before: dict[str, object]) -> None:
    assert state(agent.profile) == before
    assert agent.profile.read().processed == {}
    run = agent.profile.runs()[0]
    assert run.status == "failed" and run.errors and run.version is None


def test_endpoint_down_fails_the_llm_step_and_applies_nothing(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "a", closed_url(), Clock(T0), llm_max_retries=1)
    try:
        talk(agent)
        before = state(agent.profile)
        report = agent.sleep().run()
        assert report.status == "failed"
        assert "step 2 extract failed, nothing applied" in report.errors[0]
        assert [s.status for s in report.steps] == ["done", "failed"]
        assert_nothing_applied(agent, before)
    finally:
        agent.close()


def test_429_then_success(agent: Agent, server: LLMServer) -> None:
    talk(agent)
    server.fail_next = [429]
    server.fail_headers = {"Retry-After": "0"}
    assert agent.sleep().run().status == "done"
    assert agent.profile.read().processed == {1: 1}


def test_malformed_json_is_repaired(agent: Agent, server: LLMServer) -> None:
    t = talk(agent)
    server.script('{"observations": [', {"observations": [{**OBS, "turns": [t]}]}, step="extract")
    report = agent.sleep().run()
    assert report.status == "done" and server.asked[:2] == ["extract", "extract"]
    [obs] = agent.profile.observations()
    assert obs.turn_ids == [t]


def test_schema_invalid_twice_fails_the_step_and_applies_nothing(
    agent: Agent, server: LLMServer
) -> None:
    t = talk(agent)
    server.script({"observations": [{**OBS, "turns": [t]}]}, step="extract")
    bad = {"decisions": [{"observation": 1, "action": "maybe"}]}
    server.script(bad, bad, step="classify")
    before = state(agent.profile)
    report = agent.sleep().run()
    assert report.status == "failed" and "step 4 classify failed" in report.errors[0]
    assert_nothing_applied(agent, before)
    assert agent.profile.observations() == []  # step 2's observations were not applied either


def test_token_budget_stops_the_run_before_overspending(tmp_path: Path, server: LLMServer) -> None:
    agent = Agent(tmp_path / "a", server.url, Clock(T0), llm_run_budget=50)
    try:
        talk(agent)
        report = agent.sleep(run_budget=50).run()
        assert report.status == "failed" and "budget" in report.errors[0]
        assert server.asked == []
    finally:
        agent.close()


def test_tokens_are_recorded_per_step_and_per_run(agent: Agent, server: LLMServer) -> None:
    talk(agent)
    server.script(
        Answer('{"observations": []}', prompt_tokens=120, completion_tokens=7), step="extract"
    )
    report = agent.sleep().run()
    step = next(s for s in report.steps if s.name == "extract")
    assert (step.tokens_in, step.tokens_out, step.prompt) == (120, 7, "extract@2")
    run = agent.profile.runs()[0]
    assert run.tokens_in == sum(s.tokens_in for s in report.steps) > 120
    assert run.tokens_out == sum(s.tokens_out for s in report.steps) > 7
    assert report.tokens["steps"]["extract"] == {"prompt_tokens": 120, "completion_tokens": 7}
