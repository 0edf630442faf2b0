"""A real agent database with a day of conversation, the scripted OpenAI-protocol server, and a
`Dream` wired to both. Every dream step gets a quiet default answer, so a test scripts only the
layers it is about (the Sleep steps answer "nothing found", as in tests/consolidate)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.consolidate.conftest import QUIET, Agent
from tests.llm_server import LLMServer
from tests.profile.conftest import Clock
from tideline.app import dream_limits
from tideline.consolidate import Dream, Sleep

DAY = "2026-03-14"
AWAKE = dt.datetime(2026, 3, 20, 6, 0, tzinfo=dt.UTC)  # the clock: after the days dreamt of
DREAM_QUIET: dict[str, dict[str, Any]] = {
    "dream_solidify": {"memories": []},
    "dream_digest": {},
    "dream_drift": {"found": False},
    "dream_sleep": {
        "symbols": ["a lighthouse", "a paper boat", "salt"],
        "story": "I walked along a pier that kept growing.",
        "reflection": "I hold on to small things.",
        "emotional": 3,
        "unresolved": 2,
    },
}
CONVERSATION = (
    ("user", "I finally quit my job at the bank today."),
    ("assistant", "That is a big step. How do you feel?"),
    ("user", "Scared, but I want to open a bakery with my sister Mia."),
    ("assistant", "A bakery! Where would it be?"),
    ("user", "Near the harbour, maybe. We have not decided."),
    ("assistant", "Let me know how the search goes."),
)


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        for step, answer in {**QUIET, **DREAM_QUIET}.items():
            s.default(step, answer)
        yield s


class Day:
    """One agent with a day of conversation and a dream for it."""

    def __init__(self, home: Path, url: str | None, **overrides: Any):
        self.agent = Agent(home, url, Clock(AWAKE), **overrides)
        self.memory = self.agent.memory
        self.app = self.agent.app

    def say(
        self, session: str, turns: tuple[tuple[str, str], ...], day: str = DAY, hour: int = 9
    ) -> list[int]:
        return [
            self.memory.sync_turn(session, role, text, timestamp=f"{day}T{hour:02d}:{i:02d}:00Z").id
            for i, (role, text) in enumerate(turns)
        ]

    def dream(self, *, llm: bool = True, budget: int = 0, **kw: Any) -> Dream:
        def sleep(left: int, calls: int) -> Sleep:  # the app's wiring, on the agent's profile
            return self.agent.sleep(llm=llm, run_budget=left, run_max_calls=calls)

        client = self.app.llm if llm else None
        limits = dataclasses.replace(dream_limits(self.app.settings), run_budget=budget, **kw)
        return Dream(self.agent.profile, self.memory, client, limits, sleep=sleep)

    def narratives(self, kind: str | None = None) -> list[Any]:
        return [n for n in self.memory.narratives.all(links=True) if kind is None or n.kind == kind]


@pytest.fixture
def day(tmp_path: Path, server: LLMServer, engine_env: str) -> Iterator[Day]:
    d = Day(tmp_path / "agent", server.url)
    yield d
    d.agent.close()
