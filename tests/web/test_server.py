"""`tideline serve --transport http` as a real process: the API, the panel and the MCP endpoint
answer on one port, over the same memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import payload, start_http, stop


def test_one_port_serves_the_api_the_panel_and_mcp(tmp_path: Path) -> None:
    server = start_http(tmp_path)
    base = f"http://127.0.0.1:{server.port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as http:
            turn = http.post(
                "/api/turns",
                json={"session": "s", "role": "user", "text": "The boat is called Heron"},
            )
            assert turn.status_code == 200, turn.text
            note = http.post(
                "/api/narratives",
                json={"gesture": "The boat is called Heron", "source_links": [turn.json()["id"]]},
            )
            assert note.status_code == 201, note.text
            hits = http.get("/api/search", params={"query": "Heron boat"}).json()["hits"]
            assert hits and hits[0]["id"] == note.json()["id"]
            panel = http.get("/", params={"q": "Heron"})
            assert panel.status_code == 200 and "The boat is called Heron" in panel.text
            assert http.get("/static/panel.js").status_code == 200
            assert http.get("/api/openapi.json").json()["info"]["title"].startswith("Tideline")

        async def stats(c: Any) -> dict[str, Any]:
            return dict(payload(await c.call_tool("memory_stats", {})))

        async def over_mcp() -> dict[str, Any]:
            async with (
                httpx2.AsyncClient(timeout=httpx2.Timeout(60)) as http2,
                Client(streamable_http_client(server.url, http_client=http2)) as c,
            ):
                return await stats(c)

        counted = anyio.run(over_mcp)
        assert (counted["turns"], counted["narratives"]) == (1, 1)  # the memory the API wrote
        assert "Traceback" not in server.stderr()
    finally:
        stop(server.proc)
