"""The library's MCP tools on the full server, through the SDK's client (in memory)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.library.corpus import build
from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import Embedder
from tideline.mcp import build_server


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) else data
    return dict(json.loads(result.content[0].text))


@pytest.fixture
def library_app(lib_root: Path, e5: Embedder) -> Iterator[Tideline]:
    build(lib_root)
    app = Tideline(Settings.load(overrides={"memo_root": str(lib_root)}), embedder=e5)
    yield app
    app.close()


def test_tools_list_search_status_and_synonyms(library_app: Tideline) -> None:
    async def probe() -> None:
        async with Client(build_server(library_app)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"memory_search", "memo_search", "memo_status", "memo_reindex"} <= set(tools)
            assert tools["memo_search"].input_schema["properties"]["k"]["maximum"] == 100
            found = _payload(
                await client.call_tool(
                    "memo_search", {"query": "firewall rule 4711", "path": "infra", "k": 3}
                )
            )
            assert found["hits"] and found["hits"][0]["location"] == "infra/runbook.md:13"
            status = _payload(await client.call_tool("memo_status", {}))
            assert {c["name"] for c in status["collections"]} == {"infra", "life/home"}
            found = _payload(
                await client.call_tool(
                    "memo_search", {"q": "sourdough starter", "scope": "life/home", "limit": 2}
                )
            )
            assert found["scope"] == "life/home" and len(found["hits"]) <= 2
            assert found["hits"][0]["heading"] == "Home › Sourdough bread"

    anyio.run(probe)


def test_errors_come_back_as_tool_errors_with_a_next_step(library_app: Tideline) -> None:
    async def probe() -> None:
        async with Client(build_server(library_app)) as client:
            bad = await client.call_tool("memo_search", {"query": "x", "path": "../../etc"})
            assert bad.is_error
            assert "outside the library root" in bad.content[0].text
            assert "; next: " in bad.content[0].text
            done = _payload(await client.call_tool("memo_reindex", {"path": "life/home"}))
            assert done["collections"][0]["collection"] == "life/home"
            routed = _payload(await client.call_tool("memo_route", {"query": "bread garden"}))
            assert routed["candidates"][0]["name"] == "life/home"

    anyio.run(probe)


def test_no_root_configured_is_a_clear_tool_error(settings: Settings) -> None:
    app = Tideline(settings)

    async def probe() -> None:
        async with Client(build_server(app)) as client:
            res = await client.call_tool("memo_status", {})
            assert res.is_error and "MEMO_ROOT" in res.content[0].text
            assert "\n" not in res.content[0].text

    try:
        anyio.run(probe)
    finally:
        app.close()
