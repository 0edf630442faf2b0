"""The library's MCP tools answer over the real protocol (stdio subprocess and in-memory)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from tests.library.corpus import build
from tideline.config import Settings
from tideline.mcp.library_tools import register

SERVER = """
import sys
from mcp.server.mcpserver import MCPServer
from tideline.config import Settings
from tideline.mcp.library_tools import register
server = MCPServer("memo-test")
register(server, Settings.load())
server.run("stdio")
"""


def _payload(result) -> dict:
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) else data
    return json.loads(result.content[0].text)


def test_tools_list_and_call_over_stdio(lib_root: Path, tmp_path: Path) -> None:
    build(lib_root)
    env = {
        **os.environ,
        "MEMO_ROOT": str(lib_root),
        "OMP_NUM_THREADS": "1",
        "TIDELINE_HOME": str(tmp_path / "home"),
    }
    params = StdioServerParameters(command=sys.executable, args=["-c", SERVER], env=env)

    async def probe() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memo_search", "memo_status", "memo_reindex", "memo_route"} <= names
            found = await client.call_tool(
                "memo_search", {"query": "firewall rule 4711", "path": "infra", "k": 3}
            )
            assert not found.is_error
            hits = _payload(found)["hits"]
            assert hits and hits[0]["location"] == "infra/runbook.md:13"
            status = _payload(await client.call_tool("memo_status", {}))
            assert {c["name"] for c in status["collections"]} == {"infra", "life/home"}

    anyio.run(probe)


def test_errors_come_back_as_tool_errors_with_a_next_step(
    lib_root: Path, settings: Settings
) -> None:
    build(lib_root)
    server = MCPServer("memo-test")
    handle = register(server, Settings.load(overrides={"memo_root": str(lib_root)}))

    async def probe() -> None:
        async with Client(server) as client:
            bad = await client.call_tool("memo_search", {"query": "x", "path": "../../etc"})
            assert bad.is_error
            assert "outside the library root" in bad.content[0].text
            assert "next:" in bad.content[0].text
            done = _payload(await client.call_tool("memo_reindex", {"path": "life/home"}))
            assert done["collections"][0]["collection"] == "life/home"
            routed = _payload(await client.call_tool("memo_route", {"query": "bread garden"}))
            assert routed["candidates"][0]["name"] == "life/home"

    try:
        anyio.run(probe)
    finally:
        handle.close()


def test_no_root_configured_is_a_clear_tool_error(settings: Settings) -> None:
    server = MCPServer("memo-test")
    register(server, settings)

    async def probe() -> None:
        async with Client(server) as client:
            res = await client.call_tool("memo_status", {})
            assert res.is_error and "MEMO_ROOT" in res.content[0].text

    anyio.run(probe)


def test_memo_tools_live_on_the_shared_server_and_accept_synonyms(lib_root: Path) -> None:
    from tideline.app import Tideline
    from tideline.mcp import build_server

    build(lib_root)
    app = Tideline(Settings.load(overrides={"memo_root": str(lib_root)}))
    server = build_server(app)

    async def probe() -> None:
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_search", "memo_search", "memo_status", "memo_reindex"} <= names
            found = _payload(
                await client.call_tool(
                    "memo_search", {"q": "sourdough starter", "scope": "life/home", "limit": 2}
                )
            )
            assert found["scope"] == "life/home" and len(found["hits"]) <= 2
            assert found["hits"][0]["heading"] == "Home › Sourdough bread"

    try:
        anyio.run(probe)
    finally:
        server.close()
        app.close()
