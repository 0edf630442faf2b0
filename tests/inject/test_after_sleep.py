"""End to end: a conversation, one Sleep run against the scripted OpenAI-protocol server, and
the agent's blocks show what it understood — the snapshot in T0, the live facts in T3 (the
superseded Tokyo gone), the fact a message touches with its graph neighbour, and a question."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.consolidate.conftest import QUIET, T0, Agent
from tests.consolidate.scenario import script, seed_profile
from tests.inject.conftest import clock
from tests.llm_server import LLMServer
from tests.profile.conftest import Clock
from tideline.app import inject_config
from tideline.inject import MemoryProvider

pytestmark = pytest.mark.engines


def test_a_sleep_run_shows_in_t0_t3_and_the_prefetch(tmp_path: Path, engine_env: str) -> None:
    with LLMServer() as server:
        for step, answer in QUIET.items():
            server.default(step, answer)
        agent = Agent(tmp_path / "agent", server.url, Clock(T0))
        try:
            script(server, seed_profile(agent))
            report = agent.sleep().run()
            assert report.status == "done", report.errors
            provider = MemoryProvider(
                agent.memory,
                inject_config(agent.settings),
                profile=agent.profile,
                clock=clock,
            )
            identity = provider.identity()
            t0 = next(s for s in identity.sections if s.tier == "T0")
            snapshot = agent.profile.snapshot()
            assert snapshot is not None and snapshot.run_id == report.run_id
            [item] = [i for i in t0.items if i.ref == f"snapshot:{snapshot.id}"]
            assert "lives in Osaka" in item.text and "lives in Tokyo" not in item.text
            t3 = next(s for s in identity.sections if s.tier == "T3")
            shown = {i.text for i in t3.items if i.ref.startswith("f:")}
            assert {"lives in Osaka", "nurse", "night owl"} <= shown
            assert "lives in Tokyo" not in shown  # closed by arbitration, still on the timeline

            # Without an embedder the message matches facts by their words.
            turn = provider.prefetch_block("How is life in Osaka?")
            t1p = next(s for s in turn.sections if s.tier == "T1p")
            matched, linked = t1p.parts
            assert [i.text for i in matched.items] == ["lives in Osaka"]
            assert [i.text for i in linked.items] == ["nurse"]  # related_to, from the edges step
            t1q = next(s for s in turn.sections if s.tier == "T1q")
            [question] = t1q.items
            assert question.extra.startswith("probe f:")
            statuses = [s.status for s in agent.profile.strategies(status=None)]
            assert statuses.count("asked") == 1
        finally:
            agent.close()
