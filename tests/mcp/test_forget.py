"""memory_forget over the real MCP client: a preview first, erased with confirm=true; a
correction through memory_write(supersedes=…)."""

from __future__ import annotations

import anyio

from tests.mcp.conftest import error_text, in_memory, payload
from tideline.app import Tideline


def test_an_agent_previews_then_forgets_and_corrects(agent: Tideline) -> None:
    async def session() -> None:
        async with in_memory(agent) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert tools["memory_forget"].annotations.destructive_hint is True
            said = payload(
                await c.call_tool(
                    "sync_turn",
                    {"session": "s1", "role": "user", "text": "My PIN is 4711, keep it secret"},
                )
            )["id"]
            note = payload(
                await c.call_tool(
                    "memory_write", {"gesture": "User shared a PIN 4711", "source_links": [said]}
                )
            )["id"]

            preview = payload(await c.call_tool("memory_forget", {"query": "4711"}))
            assert (preview["done"], preview["empty"]) == (False, False)
            assert [t["id"] for t in preview["turns"]] == [said]
            assert [n["id"] for n in preview["narratives"]] == [note]

            done = payload(
                await c.call_tool(
                    "memory_forget", {"q": "4711", "reason": "user asked", "confirm": True}
                )
            )
            assert done["done"] and done["why"] == "user asked"
            found = payload(
                await c.call_tool("memory_search", {"query": "PIN 4711", "include_turns": True})
            )
            assert not [h for h in found["hits"] if "4711" in h["text"]]
            trace = payload(await c.call_tool("memory_trace", {"narrative_id": note}))
            assert trace["narrative"]["gesture"] == "[forgotten]"
            assert trace["windows"][0][0]["turn"]["text"] == "[forgotten]"

            msg = error_text(await c.call_tool("memory_forget", {"turns": [999]}))
            assert msg.startswith("turn 999 does not exist")
            msg = error_text(await c.call_tool("memory_forget", {}))
            assert msg.startswith("nothing named to forget")

            old = payload(await c.call_tool("memory_write", {"gesture": "User lives in Lisbon"}))[
                "id"
            ]
            new = payload(
                await c.call_tool(
                    "memory_write", {"gesture": "User lives in Porto", "replaces": old}
                )
            )
            assert new["supersedes"] == old
            hits = payload(await c.call_tool("memory_search", {"query": "User lives"}))["hits"]
            assert [h["id"] for h in hits] == [new["id"]]

    anyio.run(session)
