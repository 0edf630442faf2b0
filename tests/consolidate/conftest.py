"""A real agent database, the scripted OpenAI-protocol server, and a Sleep wired to both.

`QUIET` answers every LLM step with "nothing found", so a test scripts only the steps it is
about; `state()` is the profile without ids and times, to compare final states across reruns.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.conftest import llm_settings
from tests.llm_server import LLMServer
from tests.profile.conftest import Clock
from tideline.app import Tideline, sleep_limits
from tideline.config import Settings
from tideline.consolidate import Sleep
from tideline.embed import Embedder
from tideline.profile import Profile

T0 = dt.datetime(2026, 1, 1, 9, 0, tzinfo=dt.UTC)
QUIET: dict[str, dict[str, Any]] = {
    "extract": {"summary": "small talk", "tags": [], "observations": []},
    "behaviour": {"facts": []},
    "classify": {"decisions": []},
    "verify": {"verdicts": []},
    "arbitrate": {"decisions": []},
    "edges": {"edges": []},
    "user_model": {"dimensions": []},
    "trajectory": {"phase": "settling", "direction": "", "stability": "stable", "anchors": []},
    "session_summary": {"summary": ""},
}


@pytest.fixture(autouse=True)
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BASE_URL", "API_KEY", "MODEL", "RUN_BUDGET", "STRUCTURED"):
        monkeypatch.delenv(f"TIDELINE_LLM_{name}", raising=False)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        for step, answer in QUIET.items():
            s.default(step, answer)
        yield s


class Agent:
    """One agent home: the app (memory, embedder none) and a profile on one hand-moved clock,
    so turns are stamped (valid time) and the profile ages them on the same time line."""

    def __init__(self, home: Path, url: str | None, clock: Clock, **overrides: Any):
        values = {"home": str(home), "embedder": "none", **overrides}
        self.settings = llm_settings(url, **values) if url else Settings.load(overrides=values)
        self.app = Tideline(self.settings, clock=clock)  # one clock: turns, profile, runs
        self.memory = self.app.memory
        self.clock = clock
        self.profile = self.app.profile

    def sleep(self, *, llm: bool = True, embedder: Embedder | None = None, **kw: Any) -> Sleep:
        llm_client = self.app.llm if llm else None
        limits = dataclasses.replace(sleep_limits(self.settings), **kw)
        return Sleep(self.profile, self.memory, llm_client, limits, embedder=embedder)

    def say(self, session: str, *turns: tuple[str, str]) -> list[int]:
        """Append (role, text) turns; their ids."""
        return [self.memory.sync_turn(session, role, text).id for role, text in turns]

    def close(self) -> None:
        self.app.close()


@pytest.fixture
def agent(tmp_path: Path, server: LLMServer, engine_env: str) -> Iterator[Agent]:
    a = Agent(tmp_path / "agent", server.url, Clock(T0))
    yield a
    a.close()


def state(profile: Profile) -> dict[str, Any]:
    """Everything a run writes, without ids, times or run ids (equal across reruns)."""
    facts = profile.facts(evidence=True)
    value = {f.id: f"{f.subject}/{f.category}/{f.value}" for f in facts}
    edges = profile.edges(live=False)
    return {
        "facts": sorted(
            (
                value[f.id], f.status, f.source_type, f.mention_count, f.decay_days,
                len(f.evidence), value.get(f.supersedes or 0), value.get(f.merged_into or 0),
            )
            for f in facts
        ),
        "people": sorted((r.name, r.relation, r.details, r.mention_count) for r in profile.relationships()),
        "events": sorted((e.title, e.status) for e in profile.events(active=None)),
        "edges": sorted((e.kind, value[e.from_fact], value[e.to_fact], e.removed_at is None) for e in edges),
        "strategies": sorted((s.kind, value.get(s.fact_id or 0), s.status) for s in profile.strategies(status=None)),
        "observations": sorted((o.text, o.about, o.processed) for o in profile.observations()),
        "processed": profile.read().processed,
        "digests": sorted((d.session_id, d.summary, tuple(d.tags), d.skipped) for d in profile.digests()),
        "user_model": [(u.dimension, u.value) for u in profile.user_model()],
        "trajectories": profile.counts()["trajectory"],
        "snapshots": profile.counts()["snapshots"],
    }  # fmt: skip
