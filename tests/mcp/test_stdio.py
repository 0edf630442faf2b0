"""The MCP server over stdio, spawned the way Claude Desktop does: `python -m tideline serve`."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.mcp.conftest import payload, serve_command, server_env
from tests.mcp.scenarios import bad_calls, check_handshake, check_tools, round_trip


def test_stdio_protocol_round_trip_and_errors(tmp_path: Path) -> None:
    command, *args = serve_command("--transport", "stdio")
    params = StdioServerParameters(command=command, args=args, env=server_env(tmp_path))
    log = tmp_path / "stderr.log"

    async def session() -> int:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                await check_handshake(c)
                await check_tools(c)
                nid = await round_trip(c)
                await bad_calls(c)
                return nid

    async def reconnect(nid: int) -> None:
        # A new process on the same home: what the first client was told is stored, is stored.
        with log.open("a") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                trace = payload(await c.call_tool("memory_trace", {"narrative_id": nid}))
                assert trace["narrative"]["id"] == nid
                stats = payload(await c.call_tool("memory_stats", {}))
                assert (stats["turns"], stats["narratives"]) == (2, 1)

    nid = anyio.run(session)
    anyio.run(reconnect, nid)
    assert "Traceback" not in log.read_text()
