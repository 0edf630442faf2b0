"""The calendar's ends (issue 31): one turn dated 9999-12-31 made every later "tomorrow", "next
week", "next year" or "this weekend" fail (`OverflowError`, `year 10000 is out of range`), and
`today=0001-01-01` every "last May" and "3 days ago". Times sent in are bounded (years
1900–2999, one-line error); every time word read against any day of the calendar is total."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from typer.testing import CliRunner

from tests.fuzz.conftest import fuzz
from tests.mcp.conftest import error_text, payload
from tests.web.conftest import client_for
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.clock import EARLIEST, LATEST, Anchor, parse_time, when
from tideline.config import Settings
from tideline.errors import InvalidInput
from tideline.mcp import build_server
from tideline.memory._dates import date_window
from tideline.profile._calendar import time_window

PHRASES = [
    "what happens tomorrow", "the day after tomorrow", "yesterday", "next week", "last week",
    "next year", "last year", "this weekend", "next weekend", "last weekend", "next month",
    "last month", "last May", "next December", "in May", "early June", "mid 2023",
    "3 days ago", "in 2 weeks", "5000 years ago", "in 9999999999 days", "99999 months ago",
    "a couple of years from now", "next Monday", "last Friday", "on Sunday", "next summer",
    "last winter", "this winter", "Feb 29", "31 December", "1 January", "later this year",
    "earlier this month", "before the trip", "after next year", "since last week",
    "until tomorrow", "через неделю", "в прошлом году", "на следующей неделе", "明年", "下周",
    "三天前", "两个月后", "2月29日", "去年",
]  # fmt: skip
NEAR_ENDS = st.one_of(
    st.dates(max_value=dt.date(1, 3, 1)),
    st.dates(min_value=dt.date(9999, 10, 1)),
    st.sampled_from([dt.date.min, dt.date.max]),
    st.dates(),
)


@fuzz(1500)
@given(NEAR_ENDS, st.sampled_from(PHRASES), st.sampled_from(["before", "after", "since", "until"]))
def test_every_time_word_is_total_on_every_day(day: dt.date, phrase: str, relation: str) -> None:
    """The pure resolvers: a window inside the calendar, or none; never an exception."""
    noon = dt.datetime.combine(day, dt.time(12), dt.UTC)
    for window in (when(phrase, day), time_window(phrase, noon, lambda: [])):
        if window is not None:
            assert EARLIEST <= window.start <= window.end <= LATEST, (day, phrase, window)
            widened = window.widened(3)
            assert EARLIEST <= widened.start <= widened.end <= LATEST
            around = Anchor(relation, phrase).around(window)
            assert around.start >= EARLIEST and around.end <= LATEST
    date_window(phrase, day)


@pytest.fixture
def edge_agent(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tideline]:
    """A memory whose newest turn is dated 9999-12-31 (stored before times were bounded)."""
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    app = Tideline(Settings.load())
    turn = app.memory.sync_turn("s1", "user", "we plan the picnic", timestamp="2026-05-01")
    app.memory.db.execute("UPDATE turns SET ts = '9999-12-31T12:00:00Z' WHERE id = ?", (turn.id,))
    yield app
    app.close()


def test_a_turn_at_the_calendars_end_breaks_no_surface(edge_agent: Tideline) -> None:
    """CLI, REST and MCP each answer "tomorrow", "next year" and "this weekend" read against a
    turn of 9999-12-31; `today` outside 1900–2999 is a one-line refusal."""
    questions = ["picnic tomorrow", "picnic next year", "picnic this weekend", "picnic next week"]
    runner = CliRunner()
    for q in questions:
        result = runner.invoke(cli, ["search", q, "--turns"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    result = runner.invoke(
        cli, ["search", "picnic 3 days ago", "--today", "0001-01-01"], catch_exceptions=False
    )
    assert result.exit_code == 2 and "today='0001-01-01' is outside" in result.stderr
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1
    with client_for(edge_agent) as client:
        for q in questions:
            answer = client.get("/api/search", params={"query": q})
            assert answer.status_code == 200, answer.text

    async def scenario() -> None:
        async with Client(build_server(edge_agent)) as client:
            for q in questions:
                found = payload(await client.call_tool("memory_search", {"query": q}))
                assert found is not None
            msg = error_text(
                await client.call_tool(
                    "memory_search", {"query": "last May", "today": "0001-01-01"}
                )
            )
            assert msg.startswith("today='0001-01-01' is outside"), msg

    anyio.run(scenario)


@fuzz(300)
@given(st.dates(), st.sampled_from(["timestamp", "today", "since"]))
def test_times_sent_in_are_bounded(day: dt.date, field: str) -> None:
    """Every day of 1900–2999 is accepted as sent, every other refused in one line."""
    if dt.date(1900, 1, 1) <= day <= dt.date(2999, 12, 31):
        assert parse_time(day.isoformat(), field) == f"{day.isoformat()}T00:00:00Z"
    else:
        with pytest.raises(InvalidInput, match=f"^{field}=.* is outside .* 1900-01-01 and 2999"):
            parse_time(day.isoformat(), field)
