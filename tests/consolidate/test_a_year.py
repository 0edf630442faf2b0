"""#24, done when: "a year of imported conversation, slept on, gives a profile whose every fact,
event and strategy lives in the conversation's time; --as-of answers for any date".

A self-contained year (tests/consolidate/year.py: six sessions, January to December 2023, in
LoCoMo's shape with LoCoMo's annotations) is imported into an agent whose clock says December
2026, slept on once and dreamt on (its last day) against the scripted OpenAI-protocol server.
Then every fact, evidence row, observation, event, person, edge, strategy, session summary
and reflection carries 2023 in valid time and 2026-12-01 in record time, and `tideline profile
--as-of` answers for a day before it, one in its middle and its last day.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.consolidate.conftest import Agent
from tests.consolidate.dream.conftest import DREAM_QUIET
from tests.consolidate.year import Span, audit, script_extraction, year_conversation
from tests.llm_server import LLMServer
from tideline.app import dream_limits
from tideline.cli.main import app as cli
from tideline.clock import ManualClock
from tideline.consolidate import Dream

pytestmark = pytest.mark.engines

NOW = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)
SPAN = Span("2023-01-14T00:00:00Z", "2023-12-18T23:59:59Z")  # its first day to its last


def profile_as_of(day: str) -> tuple[int, dict[str, object]]:
    said = CliRunner().invoke(cli, ["profile", "--as-of", day, "--json"], catch_exceptions=False)
    return said.exit_code, json.loads(said.stdout)


def test_a_year_slept_on_and_dreamt_lives_in_its_own_time(
    tmp_path: Path, server: LLMServer, engine_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "year"
    source = tmp_path / "year.json"
    source.write_text(json.dumps(year_conversation()))
    agent = Agent(home, server.url, ManualClock(NOW))
    try:
        assert agent.memory.import_file(source, "locomo").turns_added == 18
        script_extraction(agent, server, year_conversation()["conversation"], "year")
        link = {"kind": "causes", "from_fact": -7, "to_fact": -8}  # two new facts, by placeholder
        server.script({"edges": [link]}, step="edges")
        report = agent.sleep().run()
        assert report.status == "done", report.lines()

        last = agent.memory.session_turns("locomo/year/session_6")
        for step, answer in DREAM_QUIET.items():
            server.default(step, answer)
        memory = {"gesture": "Maya plans Christmas with Lena", "importance": 4}
        server.default("dream_solidify", {"memories": [{**memory, "source_links": [last[0].id]}]})
        dream = Dream(
            agent.profile,
            agent.memory,
            agent.app.llm,
            dream_limits(agent.settings),
            sleep=lambda _l, _c: agent.sleep(),
        )
        dreamt = dream.run(date="2023-12-18")
        assert dreamt.status == "done", "\n".join(dreamt.lines())

        found = audit(agent, SPAN, "2026-12-01")
        assert found["facts"] >= 6 and found["events"] == 6 and found["summaries"] == 6, found
        assert found["strategies"] and found["reflections"] and found["people"] == 1, found
        assert found["edges"] == 1, found
        lapsed = [s for s in agent.profile.strategies(status=None) if s.outcome == "expired"]
        assert lapsed and all(s.valid_to and s.valid_to < "2025" for s in lapsed)  # not 2026
        assert agent.profile.events() == []  # all of 2023's events have long expired
    finally:
        agent.close()

    monkeypatch.setenv("TIDELINE_HOME", str(home))
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    code, before = profile_as_of("2023-01-13")
    assert code == 0 and before["facts"] == []  # nothing was said yet
    code, june = profile_as_of("2023-06-01")
    values = {f["value"] for f in june["facts"]}  # type: ignore[attr-defined]
    assert code == 0 and any("half marathon" in v for v in values), values
    assert not any("Lyon" in v or "Biscuit" in v for v in values)  # said later in the year
    assert all(f["valid_from"] <= "2023-06-01T23:59:59Z" for f in june["facts"])  # type: ignore[attr-defined]
    code, december = profile_as_of("2023-12-18")
    values = {f["value"] for f in december["facts"]}  # type: ignore[attr-defined]
    assert code == 0 and any("Lyon" in v for v in values), values
