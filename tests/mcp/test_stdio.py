"""The one stdio smoke test: spawned the way Claude Desktop does, `python -m tideline serve`."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.mcp.conftest import serve_command, server_env
from tests.mcp.scenarios import check_handshake, round_trip


def test_stdio_round_trip(tmp_path: Path) -> None:
    command, *args = serve_command("--transport", "stdio")
    params = StdioServerParameters(command=command, args=args, env=server_env(tmp_path))
    log = tmp_path / "stderr.log"

    async def session() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                await check_handshake(c)
                await round_trip(c)

    anyio.run(session)
    assert "Traceback" not in log.read_text()
