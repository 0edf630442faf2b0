"""The MCP protocol scenarios on the full server, in memory: tools/list, a round trip, bad calls."""

from __future__ import annotations

import anyio

from tests.mcp.conftest import agent_settings, in_memory, payload
from tests.mcp.scenarios import bad_calls, check_handshake, check_tools, round_trip
from tideline.app import Tideline
from tideline.embed import Embedder


def test_round_trip_bad_calls_and_a_reopened_memory(agent: Tideline, e5: Embedder) -> None:
    async def session() -> int:
        async with in_memory(agent) as c:
            await check_handshake(c)
            await check_tools(c)
            nid = await round_trip(c)
            await bad_calls(c)
            return nid

    nid = anyio.run(session)

    async def reopened() -> None:
        # A new app on the same home: what the first client was told is stored, is stored.
        again = Tideline(agent_settings(), embedder=e5)
        try:
            async with in_memory(again) as c:
                trace = payload(await c.call_tool("memory_trace", {"narrative_id": nid}))
                assert trace["narrative"]["id"] == nid
                stats = payload(await c.call_tool("memory_stats", {}))
                assert (stats["turns"], stats["narratives"]) == (2, 1)
        finally:
            again.close()

    anyio.run(reopened)
