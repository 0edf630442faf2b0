"""The event calendar: events get a date range in the user's time from the words they were told
with ("last weekend", "next month"), read against the turn's own timestamp; the calendar and
time questions ("what did I do last weekend", "before the camping trip") read those ranges."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer
from tideline.clock import ManualClock

pytestmark = pytest.mark.engines

TUESDAY = "2023-06-27T10:37:00Z"


@pytest.fixture
def told(tmp_path: Path, server: LLMServer, engine_env: str) -> Iterator[Agent]:
    """One session said on Tuesday 27 June 2023, slept on that night, with four events."""
    a = Agent(
        tmp_path / "told", server.url, ManualClock(dt.datetime(2023, 6, 28, 2, 0, tzinfo=dt.UTC))
    )
    t = a.memory.sync_turn(
        "s1", "user", "We went camping last weekend; pottery starts next month.", timestamp=TUESDAY
    ).id
    events = [
        {"title": "camping trip with the kids", "when": "last weekend", "decay_days": 14, "turns": [t]},
        {"title": "pottery class starts", "when": "next month", "decay_days": 30, "turns": [t]},
        {"title": "support group", "decay_days": 30, "turns": [t]},
        {"title": "a trip", "when": "when the moon is blue", "turns": [t]},
    ]  # fmt: skip
    server.script({"summary": "camping, pottery", "events": events}, step="extract")
    assert a.sleep().run().status == "done"
    yield a
    a.close()


def test_events_get_the_date_range_their_words_name(told: Agent) -> None:
    ranges = {
        e.title: (e.valid_from, e.valid_to, e.phrase, e.said_at)
        for e in told.profile.events(active=None)
    }
    assert ranges == {
        "camping trip with the kids": (
            "2023-06-24T00:00:00Z", "2023-06-25T23:59:59Z", "last weekend", TUESDAY,
        ),
        "pottery class starts": (
            "2023-07-01T00:00:00Z", "2023-07-31T23:59:59Z", "next month", TUESDAY,
        ),
        "support group": ("2023-06-27T00:00:00Z", "2023-06-27T23:59:59Z", "", TUESDAY),
        "a trip": ("2023-06-27T00:00:00Z", "2023-06-27T23:59:59Z", "when the moon is blue", TUESDAY),
    }  # fmt: skip
    camping = next(e for e in told.profile.events(active=None) if e.phrase == "last weekend")
    assert camping.expires_at == "2023-07-09T23:59:59Z"  # 14 days after the weekend ended


def test_the_calendar_lists_what_happened_in_a_window(told: Agent) -> None:
    june = [e.title for e in told.profile.calendar("2023-06-01", "2023-06-30")]
    assert june == ["camping trip with the kids", "support group", "a trip"]
    assert [e.title for e in told.profile.calendar("2023-07-15", "2023-07-15")] == [
        "pottery class starts"
    ]
    assert told.profile.calendar("2023-05-01", "2023-05-31") == []


def test_time_questions_resolve_to_windows_of_the_users_time(told: Agent) -> None:
    def window(question: str, today: str | None = None) -> tuple[str, str] | None:
        found = told.profile.time_window(question, today)
        return None if found is None else (found.since, found.until)

    # relative phrases are read against the conversation's present (its latest turn)
    assert window("What did I do last weekend?") == ("2023-06-24T00:00:00Z", "2023-06-25T23:59:59Z")
    assert window("what did I do last May") == ("2023-05-01T00:00:00Z", "2023-05-31T23:59:59Z")
    assert window("what did I do last May", today="2024-06-01") == (
        "2024-05-01T00:00:00Z", "2024-05-31T23:59:59Z",
    )  # fmt: skip
    # tied to an event of the calendar, or to a time
    assert window("What did I do before the camping trip?") == (
        "0001-01-01T00:00:00Z", "2023-06-23T23:59:59Z",
    )  # fmt: skip
    assert window("anything after the pottery class?") == (
        "2023-08-01T00:00:00Z", "9999-12-31T23:59:59Z",
    )  # fmt: skip
    assert window("since 8 May 2023") == ("2023-05-08T00:00:00Z", "9999-12-31T23:59:59Z")
    assert window("what do I like to eat?") is None
    assert window("before the wedding") is None  # no such event, no time: nothing to read
