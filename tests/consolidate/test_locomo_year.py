"""A year of imported conversation, slept on, lives in its own time.

LoCoMo's conv-26 (19 sessions, May to October 2023) is imported into an agent whose clock says
December 2026 and slept on once, against the scripted OpenAI-protocol server answering each
session's extraction with LoCoMo's own observations and events of that session (their turns
cited by dia_id). Every fact, evidence row, event and strategy then carries 2023 in valid time
and the sleep's 2026 in record time, and the profile answers "as of" any day of that year.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.consolidate.conftest import Agent
from tests.consolidate.year import Span, audit, script_extraction, sessions
from tests.helpers import shared_data
from tests.llm_server import LLMServer
from tideline.clock import ManualClock, to_text

pytestmark = pytest.mark.engines

NOW = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)


@pytest.fixture
def year(
    tmp_path: Path, server: LLMServer, engine_env: str
) -> Iterator[tuple[Agent, dict[str, Any]]]:
    source = shared_data("locomo", "conv-26.json")
    conv = json.loads(source.read_text())
    agent = Agent(tmp_path / "year", server.url, ManualClock(NOW))
    agent.memory.import_file(source, "locomo")
    script_extraction(agent, server, conv, "conv-26")
    yield agent, conv
    agent.close()


def test_a_year_of_locomo_slept_on_lives_in_2023(year: tuple[Agent, dict[str, Any]]) -> None:
    agent, conv = year
    report = agent.sleep().run()
    assert report.status == "done", report.lines()
    recorded = to_text(NOW)
    facts = agent.profile.facts()
    assert len(facts) > 100
    for f in facts:  # valid from its earliest evidence turn's own time; learnt in 2026
        said = sorted(e.said_at for e in f.evidence if e.said_at)
        assert f.valid_from == said[0] and "2023-05-08" <= f.valid_from < "2023-10-23", f
        assert f.created_at == recorded and (f.valid_to is None or f.valid_to < "2024-02")
    closed = [f for f in facts if f.status == "closed"]
    assert closed and all(f.retired_at == recorded for f in closed)  # expired in 2023
    events = agent.profile.events(active=None)
    days = {conv[f"session_{n}_date_time"].split(" on ")[1] for n in sessions(conv)}
    assert len(events) == 25
    for e in events:
        day = dt.datetime.strptime(e.valid_from[:10], "%Y-%m-%d").strftime("%-d %B, %Y")
        assert day in days and e.created_at == recorded, e
    assert agent.profile.events() == []  # all long expired: none is active in 2026
    strategies = agent.profile.strategies(status=None)
    assert strategies and all("2023" <= (s.valid_from or "") < "2024-02" for s in strategies)
    assert all(s.created_at == recorded for s in strategies)

    # as of any day of that year
    assert agent.profile.as_of("2023-05-07").facts == []
    june = agent.profile.as_of("2023-06-15")
    assert june.facts and all(f.valid_from <= "2023-06-15T23:59:59Z" for f in june.facts)
    assert any("adopt" in f.value.lower() for f in agent.profile.as_of("2023-08-31").facts)
    assert agent.profile.as_of("2026-12-01").facts == []  # 90-day facts of 2023: none lives on
    # and everything else the profile holds: the audit of the self-contained year, on LoCoMo
    found = audit(agent, Span("2023-05-08T00:00:00Z", "2023-10-22T23:59:59Z"), recorded[:10])
    assert found["summaries"] == 19 and found["observations"] > 100, found
