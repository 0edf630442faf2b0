"""A crash inside a tool is logged and returned as a tool error; the server keeps answering."""

from __future__ import annotations

import logging

import anyio
import pytest
from mcp import Client

from tests.mcp.conftest import error_text, payload
from tideline.app import Tideline
from tideline.config import Settings
from tideline.mcp import build_server


def test_unexpected_exception_is_logged_and_returned(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    app = Tideline(settings)
    server = build_server(app)

    def explode() -> str:
        """A tool with a bug."""
        raise RuntimeError("secret internals")

    server.add_tool(explode, name="explode")

    async def scenario() -> None:
        async with Client(server) as client:
            msg = error_text(await client.call_tool("explode", {}))
            assert msg.startswith("explode failed with an unexpected RuntimeError")
            assert "secret internals" not in msg  # the details stay in the log
            assert payload(await client.call_tool("memory_stats", {}))["turns"] == 0

    try:
        with caplog.at_level(logging.ERROR, logger="tideline.mcp"):
            anyio.run(scenario)
    finally:
        app.close()
    crash = [r for r in caplog.records if r.name == "tideline.mcp"]
    assert crash and crash[0].exc_info and "secret internals" in str(crash[0].exc_info[1])
