"""What every transport must do, written once: tools/list, a round trip, bad calls."""

from __future__ import annotations

import re
from typing import Any

import tideline
from tests.mcp.conftest import AGENT, error_text, payload

MEMORY_TOOLS = ("sync_turn", "memory_write", "memory_search", "memory_trace", "memory_stats")

TURN = "My sister Anna moved to Lisbon in March to work at a bakery near the river."
REPLY = "That sounds like a big step for her; how is she settling in?"


async def check_handshake(client: Any) -> None:
    assert client.server_info.name == "tideline"
    assert client.server_info.version == tideline.__version__ != ""
    assert AGENT in (client.instructions or "")


async def check_tools(client: Any) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(MEMORY_TOOLS) <= set(tools)
    assert {"memo_search", "memo_status", "memo_reindex"} <= set(tools)  # one server for all
    for tool in tools.values():  # a docstring's source indentation is not part of what it says
        assert not re.search(r"\n[ \t]", tool.description or ""), (tool.name, tool.description)
    for name in MEMORY_TOOLS:
        tool = tools[name]
        assert f"{AGENT}'s" in tool.description, name
        for prop, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{name}.{prop} has no description"
    search, write, turn = tools["memory_search"], tools["memory_write"], tools["sync_turn"]
    assert search.annotations.read_only_hint and search.annotations.open_world_hint is False
    assert tools["memory_trace"].annotations.read_only_hint
    assert tools["memory_stats"].annotations.read_only_hint
    assert write.annotations.read_only_hint is False
    assert write.annotations.destructive_hint is False
    assert write.annotations.idempotent_hint is False
    assert turn.annotations.idempotent_hint and turn.annotations.destructive_hint is False
    assert search.input_schema["required"] == ["query"]


async def round_trip(client: Any) -> int:
    """sync_turn (twice: idempotent) → memory_write → memory_search → memory_trace."""
    turn = {"session": "s1", "role": "user", "text": TURN, "speaker": "Kai"}
    first = payload(await client.call_tool("sync_turn", turn))
    assert first["created"] is True
    again = payload(await client.call_tool("sync_turn", turn))
    assert again == {**first, "created": False}
    # Synonyms models use: session_id for session, content for text.
    reply = payload(
        await client.call_tool(
            "sync_turn", {"session_id": "s1", "role": "assistant", "content": REPLY}
        )
    )
    assert reply["created"] is True and reply["session_id"] == first["session_id"]

    written = payload(
        await client.call_tool(
            "memory_write",
            {
                "gesture": "Kai's sister Anna moved to Lisbon to work at a bakery",
                "importance": 4,
                "tags": "family, anna",
                "related_entities": ["Anna", "Lisbon"],
                "source_links": [first["id"]],
            },
        )
    )
    assert written["tags"] == ["family", "anna"] and written["source_links"] == [first["id"]]

    found = payload(
        await client.call_tool(
            "memory_search", {"q": "where does Kai's sister live now?", "limit": 3}
        )
    )
    assert found["hits"][0]["type"] == "narrative" and found["hits"][0]["id"] == written["id"]
    # #37: memories and raw turns by default, in one list; include_turns=false narrows
    both = {"query": "bakery Lisbon", "k": 5, "mode": "lex"}
    with_turns = payload(await client.call_tool("memory_search", both))
    assert {"narrative", "turn"} <= {h["type"] for h in with_turns["hits"]}
    narrow = payload(await client.call_tool("memory_search", {**both, "include_turns": False}))
    assert {h["type"] for h in narrow["hits"]} == {"narrative"}

    trace = payload(await client.call_tool("memory_trace", {"id": written["id"], "window": 1}))
    assert trace["narrative"]["id"] == written["id"]
    turns = [t for window in trace["windows"] for t in window]
    assert [t["turn"]["text"] for t in turns if t["source"]] == [TURN]
    assert any(t["turn"]["text"] == REPLY for t in turns)
    return int(written["id"])


async def bad_calls(client: Any) -> None:
    """Each comes back as isError with one line that says what to do; the server keeps going."""
    msg = error_text(
        await client.call_tool("memory_write", {"gesture": "x", "source_links": [999]})
    )
    assert msg.startswith("turn 999 does not exist")
    assert "turn ids with memory_search" in msg

    msg = error_text(await client.call_tool("memory_search", {"query": "x", "k": "ten"}))
    assert msg.startswith("memory_search: argument 'k'") and "'ten'" in msg

    msg = error_text(await client.call_tool("memory_trace", {"narrative_id": 424242}))
    assert msg.startswith("narrative 424242 does not exist") and "memory_search" in msg

    msg = error_text(await client.call_tool("memory_search", {"query": "x", "bogus": 1}))
    assert "'bogus'" in msg and "query" in msg

    msg = error_text(await client.call_tool("memory_write", {"importance": 3}))
    assert "missing required argument 'gesture'" in msg

    msg = error_text(await client.call_tool("memory_write", {"gesture": "x", "importance": 9}))
    assert "'importance'" in msg

    msg = error_text(await client.call_tool("memory_search", {"query": "   "}))
    assert msg.startswith("query is empty")

    msg = error_text(await client.call_tool("memory_delete", {}))
    assert msg.startswith("there is no tool 'memory_delete'") and "memory_search" in msg

    stats = payload(await client.call_tool("memory_stats", {}))
    assert stats["turns"] >= 0
