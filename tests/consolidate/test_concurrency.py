"""A person's correction during a sleep: the run recomputes once from a fresh read; a second
change aborts it cleanly (recorded, nothing applied). Post-transaction: facts searchable, themes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.consolidate.conftest import T0, Agent
from tests.consolidate.scenario import script, seed_profile
from tests.llm_server import LLMServer
from tests.profile.conftest import Clock
from tideline.consolidate import StepEvent
from tideline.embed import Embedder

pytestmark = pytest.mark.engines


def test_profile_changed_mid_run_recomputes_once(agent: Agent, server: LLMServer) -> None:
    script(server, seed_profile(agent))
    rejected: list[int] = []

    def correct(event: StepEvent) -> None:
        if event.name == "apply" and event.phase == "start" and not rejected:
            rejected.append(agent.profile.reject(3, "I never played Go").id)

    report = agent.sleep().run(progress=correct)
    assert report.status == "done" and report.notes == [
        "the profile changed while computing; recomputed once"
    ]
    assert agent.profile.fact(3).status == "rejected"
    assert [f.status for f in agent.profile.facts() if f.category.lower() == "hobby"] == [
        "rejected",
        "suspected",
    ]


def test_profile_changed_twice_aborts_cleanly(agent: Agent, server: LLMServer) -> None:
    script(server, seed_profile(agent))
    left = [3, 4]

    def correct(event: StepEvent) -> None:
        if event.name == "apply" and event.phase == "start" and left:
            agent.profile.reject(left.pop(0), "wrong")

    before = agent.profile.read().processed
    report = agent.sleep().run(progress=correct)
    assert report.status == "aborted" and report.errors[0].startswith("aborted, nothing applied")
    assert agent.profile.read().processed == before
    assert agent.profile.runs()[0].status == "failed"


def test_facts_are_indexed_and_themed_after_the_transaction(
    tmp_path: Path, server: LLMServer, e5: Embedder
) -> None:
    agent = Agent(tmp_path / "a", server.url, Clock(T0))
    try:
        script(server, seed_profile(agent))
        report = agent.sleep(embedder=e5).run()
        index, themes = report.post
        assert (
            index.status == "done"
            and index.changes["indexed"] == 7
            and index.changes["embedded"] == 7
        )
        assert themes.status == "done" and themes.changes["themes"] >= 2
        qvec = e5.embed_query("which city")
        assert [f.value for f, _ in agent.profile.fact_hits("which city", qvec, k=1)] == [
            "lives in Osaka"
        ]
        assert sum(t.size for t in agent.profile.themes()) == len(
            agent.profile.facts(status=["suspected", "confirmed", "established"])
        )
    finally:
        agent.close()
