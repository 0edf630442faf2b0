"""Hermes Agent's own loop (`run_agent.AIAgent`, hermes-agent 0.19) with Tideline installed by
`tideline hermes install`, against a scripted model on 127.0.0.1 that records every request:
what the model is sent is what a Hermes user's model gets."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hermes.conftest import NO_HERMES

pytest.importorskip("agent.memory_provider", reason=NO_HERMES)

from run_agent import AIAgent

from tests.hermes.chat_model import MODEL, Call, ChatModel
from tests.hermes.conftest import turns, write_config
from tideline.hermes import install

TOLD = "My sister Anna moved to Lisbon last May; she teaches violin there."
LESSON = "I should ask about Anna's violin pupils when the user mentions Lisbon."
FENCE = "<memory-context>"


@pytest.fixture
def model() -> Iterator[ChatModel]:
    with ChatModel() as m:
        yield m


@pytest.fixture
def installed(hermes_home: Path) -> Path:
    """A Hermes home as `tideline hermes install` leaves it, without the slow extras: no
    environment probe (its subprocesses), no sleep process at the session's end."""
    write_config(hermes_home, sleep_on_exit=False)
    text = (hermes_home / "config.yaml").read_text()
    (hermes_home / "config.yaml").write_text(text + "agent:\n  environment_probe: false\n")
    (hermes_home / "SOUL.md").write_text("You are Quill, a careful assistant.\n")
    install(hermes_home)
    return hermes_home


def agent(model: ChatModel, session: str) -> AIAgent:
    return AIAgent(
        base_url=model.url,
        api_key="sk-local",
        model=MODEL,
        quiet_mode=True,
        session_id=session,
        platform="cli",
        skip_context_files=True,  # not this repository's AGENTS.md
        load_soul_identity=True,  # but $HERMES_HOME/SOUL.md, as the CLI does
        enabled_toolsets=["memory"],
    )


def user_turn(chat: dict[str, Any]) -> str:
    """The last user message a chat request carried."""
    return next(str(m["content"]) for m in reversed(chat["messages"]) if m["role"] == "user")


def system(chat: dict[str, Any]) -> str:
    return str(chat["messages"][0]["content"])


def test_a_second_session_wakes_up_knowing_what_the_first_said(
    model: ChatModel, installed: Path
) -> None:
    model.script = [
        "Lisbon! I will remember that.",
        Call("memory_write", {"gesture": LESSON, "kind": "reflection"}),
        "Noted for next time.",
    ]
    first = agent(model, "monday")
    said = first.run_conversation(TOLD)
    assert said["final_response"] == "Lisbon! I will remember that."
    kept = first.run_conversation(
        "Remember to ask about her pupils.", conversation_history=said["messages"]
    )
    assert kept["final_response"] == "Noted for next time."
    first.shutdown_memory_provider(kept["messages"])  # the session ends: the queue drains
    assert turns(installed / "tideline" / "hermes") == [
        ("monday", "user", TOLD),
        ("monday", "assistant", "Lisbon! I will remember that."),
        ("monday", "user", "Remember to ask about her pupils."),
        ("monday", "assistant", "Noted for next time."),
    ]

    tools = {t["function"]["name"] for t in model.chats[0]["tools"]}
    assert {"memory_search", "memory_write", "memory_trace", "memory_profile"} <= tools
    assert "Tideline memory" in system(model.chats[0])  # nothing remembered yet
    assert FENCE not in user_turn(model.chats[0])  # nothing to recall: no empty fence
    answer = json.loads(model.chats[2]["messages"][-1]["content"])  # the tool's result
    assert answer["kind"] == "reflection" and answer["id"] >= 1

    model.script = ["She lives in Lisbon and teaches violin."]
    second = agent(model, "tuesday")
    reply = second.run_conversation("Where does my sister live these days?")
    second.shutdown_memory_provider(reply["messages"])
    chat = model.chats[-1]
    identity = system(chat)
    assert "## T0 · identity anchor" in identity and LESSON in identity  # T0 in the prompt
    assert identity.count("You are Quill") == 1  # Hermes's SOUL.md, once
    recalled = user_turn(chat)
    assert recalled.count(FENCE) == 1 and "Lisbon" in recalled.split(FENCE)[1]
    assert "<memory-data" not in recalled and "<tideline-memory" not in recalled
    assert reply["final_response"] == "She lives in Lisbon and teaches violin."


def test_a_dead_home_costs_memory_never_the_agent(
    model: ChatModel, installed: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = installed / "a-file"
    blocked.write_text("not a folder")
    write_config(installed, home=str(blocked / "home"), sleep_on_exit=False)
    model.script = ["Hello!"]
    with caplog.at_level(logging.WARNING, logger="tideline.hermes"):
        hermes = agent(model, "wednesday")
        reply = hermes.run_conversation("Hi there")
        hermes.shutdown_memory_provider(reply["messages"])
    assert reply["final_response"] == "Hello!"
    assert "Tideline memory is off for this session" in caplog.text
    assert FENCE not in user_turn(model.chats[-1])
    assert "Tideline memory" not in system(model.chats[-1])
