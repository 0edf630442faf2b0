"""At-least-once: an exception at EVERY step boundary, and a real SIGKILL of a child process
running a sleep, apply nothing; the rerun reaches exactly the final state of an unbroken run."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.consolidate.conftest import QUIET, T0, Agent, state
from tests.consolidate.scenario import script, seed_profile
from tests.helpers import killed_at_marker
from tests.llm_server import LLMServer
from tests.profile.conftest import Clock
from tideline.consolidate import STEPS, StepEvent

BOUNDARIES = [(s.name, phase) for s in STEPS for phase in ("start", "end")] + [("apply", "start")]
ROOT = Path(__file__).parents[2]


class Boom(Exception):
    pass


def fresh(tmp_path: Path, server: LLMServer, name: str) -> Agent:
    agent = Agent(tmp_path / name, server.url, Clock(T0))
    script(server, seed_profile(agent))
    return agent


@pytest.fixture(scope="module")
def module_server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        for step, answer in QUIET.items():
            s.default(step, answer)
        yield s


@pytest.fixture
def server(module_server: LLMServer) -> LLMServer:
    """One server for the module: every test scripts the same scenario as its defaults."""
    return module_server


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, module_server: LLMServer) -> dict[str, Any]:
    """The state after one unbroken run of the scenario (computed once)."""
    agent = fresh(tmp_path_factory.mktemp("reference"), module_server, "reference")
    try:
        report = agent.sleep().run()
        assert report.status == "done", report.lines()
        return state(agent.profile)
    finally:
        agent.close()


def test_reruns_reach_a_fixed_point(tmp_path: Path, server: LLMServer) -> None:
    agent = fresh(tmp_path, server, "fixpoint")
    try:
        statuses = [agent.sleep().run().status for _ in range(3)]
        # the merged duplicate has 2 mentions but no session behind them: nothing to confirm
        assert statuses == ["done", "nothing", "nothing"]
    finally:
        agent.close()


def test_reference_run_touches_every_step(reference: dict[str, Any]) -> None:
    facts = {f[0]: f for f in reference["facts"]}
    assert facts["user/city/lives in Tokyo"][1] == "closed"
    assert facts["user/job/nurse"][1] == "suspected"  # one session: the LLM may not confirm it
    assert facts["user/habits/night owl"][2] == "inferred"
    assert facts["user/mood/tired this week"][1] == "closed"
    assert sum(1 for f in reference["facts"] if f[7]) == 1  # one duplicate merged
    assert reference["edges"] == [
        ("related_to", "user/city/lives in Osaka", "user/job/nurse", True)
    ]
    assert reference["people"] == [("Aiko", "sister", "lives near Osaka", 1)]


@pytest.mark.parametrize(("name", "phase"), BOUNDARIES, ids=[f"{n}-{p}" for n, p in BOUNDARIES])
def test_exception_at_a_boundary_applies_nothing_and_rerun_converges(
    tmp_path: Path, server: LLMServer, reference: dict[str, Any], name: str, phase: str
) -> None:
    agent = fresh(tmp_path, server, "faulty")
    try:
        before = state(agent.profile)

        def fail(event: StepEvent) -> None:
            if (event.name, event.phase) == (name, phase):
                raise Boom(f"injected at {name} {phase}")

        report = agent.sleep().run(progress=fail)
        assert report.status == "failed" and "injected" in report.errors[0]
        assert state(agent.profile) == before
        assert agent.sleep().run().status == "done"
        assert state(agent.profile) == reference
    finally:
        agent.close()


def test_post_transaction_failure_is_recorded_not_raised(
    tmp_path: Path, server: LLMServer, reference: dict[str, Any]
) -> None:
    agent = fresh(tmp_path, server, "post")
    try:

        def fail(event: StepEvent) -> None:
            if event.name == "index_facts":
                raise Boom("index down")

        report = agent.sleep().run(progress=fail)
        assert report.status == "done" and report.post[0].status == "failed"
        assert state(agent.profile) == reference
        assert "index_facts: Boom: index down" in agent.profile.runs()[0].errors[0]
    finally:
        agent.close()


@pytest.mark.parametrize("stop", ["extract", "apply", "index_facts"])
def test_kill_9_mid_sleep_then_rerun_converges(
    tmp_path: Path, server: LLMServer, reference: dict[str, Any], stop: str
) -> None:
    agent = fresh(tmp_path, server, "killed")
    agent.close()
    marker = tmp_path / "marker"
    args = [sys.executable, "-m", "tests.consolidate.sleeper", str(tmp_path / "killed"), server.url]
    args += [stop, str(marker), agent.clock.now.isoformat()]
    status = killed_at_marker(args, ROOT, marker, timeout=60)
    assert status == -signal.SIGKILL
    again = Agent(tmp_path / "killed", server.url, agent.clock)
    try:
        if stop == "index_facts":  # killed after its changes were applied: they are whole
            assert state(again.profile) == reference
            assert again.sleep().run().status == "nothing"  # it was whole: nothing left to do
        else:
            assert 2 not in again.profile.read().processed  # nothing of the run is in
            assert again.sleep().run().status == "done"
            assert state(again.profile) == reference
        killed = again.profile.runs()[1]
        assert killed.status == "failed" and killed.errors[0].startswith("interrupted")
        if stop != "extract":  # the LLM steps ran before the kill: what they spent is recorded
            assert killed.tokens_in > 0 and killed.tokens_out > 0
    finally:
        again.close()
