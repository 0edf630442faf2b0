"""A sleep bounded against what the model answers and what one run may spend: limits the model
is shown and repaired against, items cut with a record, sessions taken in under the call cap,
prompts that fit a small input cap once the system prompt is counted."""

from __future__ import annotations

import time
from pathlib import Path

from tests.consolidate.conftest import T0, Agent
from tests.llm_server import LLMServer
from tests.profile.conftest import Clock
from tideline.llm import prompt_tokens

OBS = {"type": "statement", "topic": "city", "text": "The user lives in Kyoto", "turns": []}


def test_a_small_input_cap_still_sleeps_once_the_system_prompt_counts(
    tmp_path: Path, server: LLMServer
) -> None:
    server.reject_json_schema = server.reject_object_schema = True  # JSON mode, as ollama
    agent = Agent(tmp_path / "a", server.url, Clock(T0), llm_max_input_tokens=2000)
    try:
        (t,) = agent.say("s0", ("user", "A few things about me."))
        facts = [
            {**OBS, "topic": f"thing {i}", "text": f"likes thing {i}", "turns": [t]}
            for i in range(40)
        ]
        server.script({"observations": facts}, step="extract")
        assert agent.sleep(max_input_tokens=2000).run().status == "done"  # the first night
        assert len(agent.profile.facts()) == 40
        for n in range(30):  # a session longer than one 2000-token prompt holds
            agent.say("s1", ("user", f"Day {n}: I walked along the Kamo river in Kyoto " * 3))
        report = agent.sleep(max_input_tokens=2000).run()  # the second night, with a profile
        assert report.status == "done", report.errors
        extracts = [
            c for c, step in zip(server.chats, server.asked, strict=True) if step == "extract"
        ]
        assert len(extracts) > 2  # read in chunks that fit
        for body in server.chats:
            assert prompt_tokens(body["messages"]) <= 2000
    finally:
        agent.close()


def test_a_topic_over_its_limit_gets_the_repair_and_the_sleep_completes(
    agent: Agent, server: LLMServer
) -> None:
    (t,) = agent.say("s1", ("user", "I live in Kyoto."))
    long = {**OBS, "topic": "t" * 231, "turns": [t]}
    server.script(
        {"observations": [long]}, {"observations": [{**OBS, "turns": [t]}]}, step="extract"
    )
    report = agent.sleep().run()
    assert report.status == "done", report.errors
    assert "at most 200 characters" in server.chats[1]["messages"][-1]["content"]
    assert [o.topic for o in agent.profile.observations()] == ["city"]


def test_a_topic_still_too_long_after_the_repair_is_cut_and_the_night_kept(
    agent: Agent, server: LLMServer
) -> None:
    """A model that loops in one field (a 1 MB topic, twice) costs that field, not the sleep."""
    (t,) = agent.say("s1", ("user", "I live in Kyoto."))
    looping = {"observations": [{**OBS, "topic": "t" * 2**20, "turns": [t]}]}
    server.script(looping, looping, step="extract")
    report = agent.sleep().run()
    assert report.status == "done", report.errors
    extract = next(s for s in report.steps if s.name == "extract")
    assert extract.cuts == (
        "cut to the schema's caps: observations.0.topic: cut at 200 of 1048576 characters"
    )
    [seen] = agent.profile.observations()
    assert (seen.text, seen.topic) == ("The user lives in Kyoto", "t" * 200)
    assert "cut at 200 of 1048576" in agent.profile.runs()[0].steps[1]["cuts"]


def test_ten_thousand_observations_are_cut_with_a_record_not_a_failure(
    agent: Agent, server: LLMServer
) -> None:
    (t,) = agent.say("s1", ("user", "I live in Kyoto."))
    many = [{**OBS, "text": f"fact number {i}", "turns": [t]} for i in range(10_000)]
    server.script({"observations": many}, step="extract")
    start = time.monotonic()
    report = agent.sleep().run()
    assert report.status == "done", report.errors and time.monotonic() - start < 60
    extract = next(s for s in report.steps if s.name == "extract")
    assert "observations: cut at 60 of 10000" in extract.cuts
    assert "cut to the schema's caps" in extract.line()
    assert len(agent.profile.observations()) == 60
    assert len(server.chats) < 20  # 60 observations: two classify batches, not 250
    stored = agent.profile.runs()[0].steps[1]
    assert "cut at 60 of 10000" in stored["cuts"]


def test_a_decay_of_a_billion_years_is_refused_by_the_schema_not_a_crash(
    agent: Agent, server: LLMServer
) -> None:
    (t,) = agent.say("s1", ("user", "I moved to Kyoto."))
    event = {"title": "moved to Kyoto", "decay_days": 10**15, "turns": [t]}
    fixed = {**event, "decay_days": 30}
    server.script({"events": [event]}, {"events": [fixed]}, step="extract")
    report = agent.sleep().run()
    assert report.status == "done", report.errors
    assert "less than or equal to 36500" in server.chats[1]["messages"][-1]["content"]


def test_sessions_past_the_call_cap_wait_for_the_next_run(
    tmp_path: Path, server: LLMServer
) -> None:
    agent = Agent(tmp_path / "a", server.url, Clock(T0))
    try:
        for n in range(8):
            agent.say(f"s{n}", ("user", f"Session {n}: I live in Kyoto."))
        report = agent.sleep(run_max_calls=24).run()
        assert report.status == "done", report.errors
        extract = next(s for s in report.steps if s.name == "extract")
        taken = extract.changes["sessions"]
        assert 0 < taken < 8 and f"cut at {taken} session(s)" in extract.note
        assert f"{8 - taken} wait for the next run" in extract.note
        assert report.tokens["calls"] <= 24
        assert len(agent.profile.read().processed) == taken
        while len(agent.profile.read().processed) < 8:  # each night takes in the next few
            assert agent.sleep(run_max_calls=24).run().status == "done"
    finally:
        agent.close()


def test_a_window_learnt_from_the_servers_refusal_recomputes_the_run_once(
    tmp_path: Path, server: LLMServer
) -> None:
    server.n_ctx = 2048  # llama-cpp-python --n_ctx 2048: says so only when a prompt overflows
    agent = Agent(tmp_path / "a", server.url, Clock(T0))
    try:
        for n in range(90):
            agent.say("s1", ("user", f"Day {n}: I walked along the Kamo river in Kyoto " * 3))
        report = agent.sleep().run()
        assert report.status == "done", report.errors
        assert any("recomputed once with prompts sized to it" in n for n in report.notes)
        extracts = [
            c for c, step in zip(server.chats, server.asked, strict=True) if step == "extract"
        ]
        assert len(extracts) > 2 and all(c["max_tokens"] == 512 for c in extracts[1:])
        assert agent.profile.read().processed == {1: 90}
    finally:
        agent.close()
