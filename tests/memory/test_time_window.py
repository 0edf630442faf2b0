"""Time questions to search: "what did I do last May", "before the trip" are searched in that
time — the turns said then and the memories of then are lifted (or kept alone) — with relative
words read against the conversation's present (its newest turn) unless the caller gives today,
and anchors read through the calendar's events. A question without time words is unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from tests.mcp.conftest import payload
from tests.web.conftest import client_for
from tideline.app import Tideline
from tideline.cli.main import app as main
from tideline.config import Settings
from tideline.errors import ConfigError
from tideline.mcp import build_server
from tideline.memory import Memory
from tideline.profile import EventDraft

pytestmark = pytest.mark.engines

#: One 2023 conversation: the hike said in May is the weaker lexical match of "hike".
TURNS = [
    ("s1", "2023-03-12T09:00:00Z", "I love to hike: we hiked the ridge trail, my favourite hike"),
    ("s2", "2023-05-20T18:00:00Z", "Went on a hike up the canyon loop with my sister"),
    ("s3", "2023-06-28T10:00:00Z", "I packed my new tent and the stove"),
    ("s4", "2023-08-02T10:00:00Z", "I packed the tent away and packed the stove into the garage"),
    ("s5", "2023-10-22T11:00:00Z", "Work has been busy, lots of meetings this week"),
]
#: The trip of the calendar ("before the trip").
TRIP = EventDraft(
    "camping trip to Yosemite",
    valid_from="2023-07-10T00:00:00Z",
    valid_to="2023-07-15T23:59:59Z",
    said_at="2023-07-17T10:00:00Z",
)

Open = Callable[[str], Tideline]


@pytest.fixture
def home(engine_env: str, tmp_path: Path) -> Iterator[Open]:
    """The same home opened with a `search_time_window` setting; the conversation and the
    calendar written once (lexical search: no embedder, so the order is the words')."""
    opened: list[Tideline] = []

    def open_with(window: str) -> Tideline:
        app = Tideline(Settings.load(overrides={"embedder": "none", "search_time_window": window}))
        opened.append(app)
        return app

    first = open_with("off")
    for session, ts, text in TURNS:
        first.memory.sync_turn(session, "user", text, timestamp=ts)
    first.memory.write(gesture="The hike up the canyon loop", created_at="2023-05-20T19:00:00Z")
    first.memory.write(gesture="Another hike on the ridge trail, a hike", created_at="2023-03-13")
    with first.db_lock, first.db.transaction():
        first.profile.stores.events.insert(
            TRIP, valid_from=TRIP.valid_from or "", expires_at=None, now="2023-07-17T10:00:00Z",
            run_id=None,
        )  # fmt: skip
    yield open_with
    for app in opened:
        app.close()


def texts(memory: Memory, question: str, **kw: object) -> list[str]:
    result = memory.search(question, k=5, include_turns=True, mode="lex", min_score=0, **kw)  # type: ignore[arg-type]
    return [h.text for h in result.hits if h.type == "turn"]


def test_last_may_ranks_the_may_turn_first_read_in_the_conversations_time(home: Open) -> None:
    off, on = home("off").memory, home("0.5").memory
    question = "where did I hike last May?"
    assert texts(off, question)[0].startswith("I love to hike")  # the words alone: March
    found = on.search(question, k=5, include_turns=True, mode="lex", min_score=0)
    turns = [h for h in found.hits if h.type == "turn"]
    assert turns[0].text.startswith("Went on a hike up the canyon")
    assert "in last May: 1–31 May 2023" in turns[0].explain()  # the window, named
    assert turns[0].to_dict()["window"] == "last May: 1–31 May 2023, give or take 3 days"
    assert all("window" not in h.to_dict() for h in turns[1:] if "canyon" not in h.text)
    # the memory of that May is lifted too (its valid time), above the ridge trail's
    memories = [h.text for h in found.hits if h.type == "narrative"]
    assert memories[0] == "The hike up the canyon loop"
    plain = off.search(question, mode="lex", min_score=0, include_turns=False).hits
    assert plain[0].text.startswith("Another hike")
    # "last May" from a caller whose today is in 2024 is May 2024: nothing then, order unchanged
    assert texts(on, question, today="2024-06-10") == texts(off, question)


def test_before_the_trip_reads_the_calendar(home: Open) -> None:
    off, on = home("off").memory, home("0.5").memory
    question = "what did I pack before the trip?"
    assert texts(off, question)[0].startswith("I packed the tent away")  # August: more words
    found = on.search(question, k=5, include_turns=True, mode="lex", min_score=0)
    first = next(h for h in found.hits if h.type == "turn")
    assert first.text == "I packed my new tent and the stove"
    assert "· before camping trip to Yosemite: until 9 July 2023, give or take" in first.explain()
    after = texts(on, "what did I pack after the trip?")
    assert after[0].startswith("I packed the tent away")


def test_a_question_without_time_words_is_unchanged_byte_for_byte(home: Open) -> None:
    off, lifted, only = (home(w).memory for w in ("off", "1", "restrict"))

    def answer(memory: Memory, question: str) -> str:
        found = memory.search(question, k=10, include_turns=True, mode="lex", min_score=0)
        return json.dumps(found.to_dict(), sort_keys=True)

    for question in ("where did I hike?", "tent and stove", "meetings"):
        assert answer(lifted, question) == answer(off, question)
        assert answer(only, question) == answer(off, question)
    assert answer(lifted, "where did I hike last May?") != answer(off, "where did I hike last May?")
    # a caller's own time filter is the window: the stage stays out of it
    kept = dict(since="2023-01-01", until="2023-12-31")
    assert texts(lifted, "hike last May", **kept) == texts(off, "hike last May", **kept)


def test_an_empty_window_falls_back_instead_of_answering_nothing(home: Open) -> None:
    off, lifted, only = (home(w).memory for w in ("off", "0.5", "restrict"))
    # restricted to May: only what was said then
    assert texts(only, "where did I hike last May?") == [
        "Went on a hike up the canyon loop with my sister"
    ]
    # nothing was said last December (2022): the answer comes from any time, and says so
    question = "where did I hike last December?"
    found = only.search(question, k=5, include_turns=True, mode="lex", min_score=0)
    assert [h.text for h in found.hits if h.type == "turn"] == texts(off, question)
    assert found.hits and all(h.window is None for h in found.hits)
    assert "nothing relevant said in last December: 1–31 December 2022" in found.warnings[0]
    assert texts(lifted, question) == texts(off, question)


def test_the_window_is_explained_as_it_was_searched(home: Open) -> None:
    """A turn found by the slack says so; the question's own "in" is not doubled; and a search
    whose turns were found in the window never says nothing was said then."""
    only = home("restrict").memory
    # 28 June and 2 August are in "last July" only by the 3 days of slack a turn is given
    found = only.search(
        "what did I pack last July?", k=5, include_turns=True, mode="lex", min_score=0
    )
    packed = [h for h in found.hits if h.type == "turn"]
    assert {h.text for h in packed} == {TURNS[2][2], TURNS[3][2]}
    assert all("in last July: 1–31 July 2023, give or take 3 days" in h.explain() for h in packed)
    # "in May" is the question's own words: "in May: …", never "in in May"
    found = only.search(
        "where did I hike in May?", k=5, include_turns=True, mode="lex", min_score=0
    )
    named = [h.explain() for h in found.hits if h.window]
    assert named and all("· in May: 1–31 May 2023" in e and "in in " not in e for e in named)
    # last October: no memory then, but the meetings turn was said then — no "nothing said"
    found = only.search(
        "meetings last October",
        k=5,
        include_turns=True,
        mode="lex",
        min_score=0,
        today="2023-11-15",
    )
    assert [h.text for h in found.hits if h.window] == [TURNS[4][2]]
    assert not any("nothing relevant" in w for w in found.warnings), found.warnings


def test_a_turn_said_then_shown_by_the_date_lever_is_no_nothing_said(engine_env: str) -> None:
    """ "in May 2023" is the date lever's for turns (lifted by it, not marked with the window);
    with no memory of May, the May turn shown means no notice says nothing was said then."""
    app = Tideline(Settings.load(overrides={"embedder": "none", "search_time_window": "restrict"}))
    try:
        for session, at, text in TURNS[:2]:
            app.memory.sync_turn(session, "user", text, timestamp=at)
        found = app.memory.search(
            "where did I hike in May 2023?", k=5, include_turns=True, mode="lex", min_score=0
        )
        assert found.hits[0].text == TURNS[1][2]
        assert not any("nothing relevant" in w for w in found.warnings), found.warnings
    finally:
        app.close()


def test_the_setting_says_what_it_takes(engine_env: str) -> None:
    app = Tideline(Settings.load(overrides={"embedder": "none", "search_time_window": "sometimes"}))
    try:
        with pytest.raises(ConfigError, match=r"search_time_window='sometimes'.*off, restrict"):
            _ = app.memory
    finally:
        app.close()


def test_every_driver_searches_in_the_window_and_takes_today(
    home: Open, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLI, MCP and REST reach the stage through `Memory.search`: the same first turn, the
    window named in the explanation, and `today` moving "last May" to May 2024 (nothing then)."""
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    monkeypatch.setenv("TIDELINE_SEARCH_TIME_WINDOW", "0.5")
    question = "where did I hike last May?"
    may = "Went on a hike up the canyon loop with my sister"
    ridge = "I love to hike: we hiked the ridge trail, my favourite hike"

    def turns(found: dict[str, Any]) -> list[dict[str, Any]]:
        return [h for h in found["hits"] if h["type"] == "turn"]

    # the CLI
    cli = CliRunner()
    args = ["search", question, "--turns", "--mode", "lex", "--min-score", "0", "--json"]
    first = turns(json.loads(cli.invoke(main, args, catch_exceptions=False).stdout))[0]
    assert first["text"] == may and "in last May: 1–31 May 2023" in first["explain"]
    later = cli.invoke(main, [*args, "--today", "2024-06-10"], catch_exceptions=False).stdout
    assert turns(json.loads(later))[0]["text"] == ridge
    app = home("0.5")
    # MCP, with the real SDK client
    server = build_server(app)

    async def ask(**extra: str) -> dict[str, Any]:
        async with Client(server) as client:
            result = await client.call_tool(
                "memory_search",
                {"query": question, "include_turns": True, "mode": "lex", "min_score": 0, **extra},
            )
            found: dict[str, Any] = payload(result)
            return found

    first = turns(anyio.run(ask))[0]
    assert first["window"] == "last May: 1–31 May 2023, give or take 3 days"  # a turn's slack
    assert first["text"] == may
    assert turns(anyio.run(lambda: ask(today="2024-06-10")))[0]["text"] == ridge
    # REST
    with client_for(app) as rest:
        params = {"query": question, "include_turns": "true", "mode": "lex", "min_score": "0"}
        found = rest.get("/api/search", params=params).json()
        assert turns(found)[0]["text"] == may and "in last May" in turns(found)[0]["explain"]
        moved = rest.get("/api/search", params={**params, "today": "2024-06-10"}).json()
        assert turns(moved)[0]["text"] == ridge
