"""A sleep waiting minutes on its LLM holds no lock: `sync_turn` and `memory_write` from another
thread (same app, same connection and lock) each finish within 1 s meanwhile."""

from __future__ import annotations

import threading
import time

import pytest

from tests.consolidate.conftest import Agent
from tests.helpers import wait_until
from tests.llm_server import Answer, LLMServer
from tideline.consolidate import SleepReport

pytestmark = pytest.mark.engines


def test_writers_are_not_blocked_while_sleep_waits_on_a_slow_llm(
    agent: Agent, server: LLMServer
) -> None:
    (t,) = agent.say("s1", ("user", "I live in Lisbon."))
    obs = {"type": "statement", "topic": "city", "text": "The user lives in Lisbon", "turns": [t]}
    server.script(
        Answer(
            f'{{"observations": [{{"type": "statement", "topic": "city", "text": "{obs["text"]}", "turns": [{t}]}}]}}',
            delay=2.0,
        ),
        step="extract",
    )
    done: list[SleepReport] = []
    sleeper = threading.Thread(target=lambda: done.append(agent.sleep().run()))
    sleeper.start()
    wait_until(lambda: "extract" in server.asked)  # the sleep is now waiting on the model
    worst, writes = 0.0, 0
    while sleeper.is_alive() and writes < 200:
        t0 = time.monotonic()
        agent.memory.sync_turn("s1", "user", f"still here {writes}")
        agent.memory.write(gesture=f"noted {writes}", importance=2)
        worst = max(worst, time.monotonic() - t0)
        writes += 1
    sleeper.join(timeout=30)
    assert done and done[0].status == "done", done and done[0].lines()
    assert writes >= 2 and worst < 1.0, (writes, worst)
    # the turns written meanwhile were not digested: the next run picks them up
    assert agent.profile.read().processed == {1: t}
