"""Session memory: sliding summary (stored, incremental) + vector recall + recent turns, within
the character budget; without an LLM the summary part is skipped and says so."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import wait_until
from tests.llm.conftest import llm_settings
from tests.llm_server import Answer, LLMServer, closed_url
from tideline.app import Tideline, session_limits
from tideline.consolidate import SessionMemory
from tideline.embed import Embedder
from tideline.llm import NO_LLM_NOTE

pytestmark = pytest.mark.engines

TOPICS = ["the weather", "a football match", "lunch plans", "a new laptop", "a film", "the train"]


@pytest.fixture
def app(tmp_path: Path, server: LLMServer, e5: Embedder, engine_env: str) -> Iterator[Tideline]:
    app = Tideline(llm_settings(server.url, home=str(tmp_path / "home")), embedder=e5)
    yield app
    app.close()


def conversation(app: Tideline, n: int = 16) -> None:
    app.memory.sync_turn("chat", "user", "My daughter Mia starts violin lessons on Tuesday.")
    for i in range(n - 1):
        role = ("assistant", "user")[i % 2]
        app.memory.sync_turn("chat", role, f"Turn {i} about {TOPICS[i % len(TOPICS)]}.")


def test_summary_recall_and_recent_within_budget(app: Tideline, server: LLMServer) -> None:
    conversation(app)
    server.script(
        {"summary": "Mia (the user's daughter) starts violin on Tuesday."}, step="session_summary"
    )
    sm = app.session_memory
    sm.summary_wait = 30  # this test is about the layers: wait for the update
    ctx = sm.context("chat", "When is Mia's violin lesson?")
    assert len(ctx.text) <= 3000 and ctx.notes == []
    assert ctx.text.startswith("[Summary of earlier conversation]\nMia")
    turns = app.memory.session_turns("chat")
    assert ctx.recent == [t.id for t in turns[-5:]]  # keep_recent 5
    assert turns[0].id in ctx.recalled  # the violin turn, recalled by similarity
    assert server.asked == ["session_summary"]
    # incremental: the stored summary covers turns 1–11; the next message asks nothing new
    sm.context("chat", "And the laptop?")
    assert server.asked == ["session_summary"]
    app.memory.sync_turn("chat", "user", "One more thing.")
    assert sm.context("chat", "ok").text.count("[Recent turns]") == 1


def test_budget_is_a_hard_limit(app: Tideline, server: LLMServer) -> None:
    for i in range(8):
        app.memory.sync_turn("long", "user", f"{i} " + "word " * 150)
    server.script({"summary": "x" * 5000}, step="session_summary")
    limits = replace(session_limits(app.settings), char_budget=1000)
    sm = SessionMemory(app.memory, app.llm, limits, summary_wait=30)
    ctx = sm.context("long", "word")
    assert len(ctx.text) <= 1000 and len(ctx.summary) <= 400 and ctx.recent


def test_without_an_llm_the_summary_is_skipped_and_says_so(app: Tideline) -> None:
    conversation(app)
    sm = SessionMemory(app.memory, None, session_limits(app.settings))
    ctx = sm.context("chat", "violin lesson")
    assert ctx.summary == "" and ctx.notes == [f"summary {NO_LLM_NOTE}"]
    assert len(ctx.recent) == 5 and ctx.recalled


def test_a_hanging_endpoint_holds_the_prefetch_up_a_quarter_second_not_minutes(
    app: Tideline, server: LLMServer
) -> None:
    conversation(app)
    summary = {"summary": "Mia (the user's daughter) starts violin on Tuesday."}
    server.script(Answer(json.dumps(summary), delay=4), step="session_summary")
    sm = app.session_memory
    start = time.monotonic()
    ctx = sm.context("chat", "When is Mia's violin lesson?")
    assert time.monotonic() - start < 2  # was the whole answer's wait, up to llm_timeout
    assert ctx.notes == ["summary: being brought up to date in the background"]
    assert ctx.summary == "" and len(ctx.recent) > 5  # the turns in full, newest first
    assert len(ctx.text) <= 3000
    later = wait_until(lambda: sm.context("chat", "violin?").summary, timeout=30)
    assert later.startswith("Mia") and server.asked == ["session_summary"]


def test_a_failing_endpoint_is_noted_and_tried_again_later(tmp_path: Path) -> None:
    settings = llm_settings(closed_url(), home=str(tmp_path / "home"), llm_max_retries=1)
    app = Tideline(settings)
    try:
        conversation(app)
        sm = app.session_memory
        notes = wait_until(
            lambda: [n for n in sm.context("chat", "hi").notes if "not brought up" in n],
            timeout=30,
        )
        assert "failed step 'session_summary' after 2 tries" in notes[0]
        start = time.monotonic()
        assert sm.context("chat", "hi").summary == ""  # asked again, not waited on
        assert time.monotonic() - start < 2
    finally:
        app.close()


def test_recall_is_the_turn_search_inside_the_session(app: Tideline) -> None:
    """Recall is the turn search (its relevance and floor) within the one session: it once took
    the three nearest turns by cosine against 0.45, which every e5 pair clears, so a message
    about nothing said was still given three turns."""
    conversation(app)
    app.memory.sync_turn("other", "user", "Mia's violin teacher moved to Berlin.")
    near = app.memory.search_session("chat", "When is Mia's violin lesson?", 3)
    assert near[0][0].text.startswith("My daughter Mia starts violin")
    assert {t.session for t, _ in near} == {"chat"}  # never another session's turn
    assert all(score >= app.memory.min_score for _, score in near)
    sm = SessionMemory(app.memory, None, session_limits(app.settings))
    assert sm.context("chat", "When is Mia's violin lesson?").recalled[0] == near[0][0].id
    nothing = "Which quantum algorithm factors large primes?"
    assert app.memory.search_session("chat", nothing, 3) == []
    assert sm.context("chat", nothing).recalled == []
