"""The hooks, the CLI and the MCP server give the same blocks on the same memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from typer.testing import CliRunner

from tests.inject.conftest import Fixed
from tests.mcp.conftest import payload, serve_command, server_env
from tideline.cli.main import app as cli

pytestmark = pytest.mark.engines

MESSAGE = "How is Kai's move to Lisbon going?"


def _body(text: str) -> str:
    """The block without its first line (which carries the time it was made)."""
    return text.split("\n", 1)[1]


def _sections(block: dict[str, Any]) -> list[dict[str, Any]]:
    return block["sections"]


def test_cli_prints_the_hook_blocks(fixed: Fixed) -> None:
    provider = fixed.provider()
    identity = provider.identity()
    runner = CliRunner()
    env = {"AGENT_NAME": "hui"}
    text = runner.invoke(cli, ["inject"], env=env, catch_exceptions=False)
    assert text.exit_code == 0, text.output
    assert _body(text.output.rstrip("\n")) == _body(identity.text)
    as_json = runner.invoke(cli, ["inject", "--json"], env=env, catch_exceptions=False)
    data = json.loads(as_json.output)
    assert data["tiers"] == ["T0", "T2", "T2b", "T3"] and data["kind"] == "identity"
    assert _sections(data) == [s.to_dict() for s in identity.sections]
    assert data["notes"] == identity.notes
    # The header line carries the time the block was made (the CLI's clock is the real one), so
    # the totals may differ by the tokens of that line only — this block's own header: the
    # first call's time may spell another second than this one's
    header = provider.count(data["text"].split("\n", 1)[0]) - provider.count(
        identity.text.split("\n", 1)[0]
    )
    assert data["tokens"] == identity.tokens + header

    turn = provider.prefetch_block(MESSAGE)
    out = runner.invoke(cli, ["prefetch", MESSAGE, "--json"], env=env, catch_exceptions=False)
    data = json.loads(out.output)
    assert data["tiers"] == turn.tiers and _sections(data) == [s.to_dict() for s in turn.sections]
    # Both the hook and the command logged their T1 hits.
    logged = fixed.app.memory.db.scalar("SELECT count(*) FROM attention_log")
    assert logged == 2 * len([i for i in turn.sections[0].items if i.ref.startswith("n:")])


def test_mcp_tool_and_resource_give_the_same_blocks(fixed: Fixed, tmp_path: Path) -> None:
    identity = fixed.provider().identity()
    turn = fixed.provider().prefetch_block(MESSAGE)
    fixed.app.close()
    command, *args = serve_command("--transport", "stdio")
    params = StdioServerParameters(command=command, args=args, env=server_env(tmp_path))
    log = tmp_path / "stderr.log"

    async def session() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                tools = {t.name: t for t in (await c.list_tools()).tools}
                tool = tools["memory_context"]
                assert "hui's memory" in tool.description
                assert tool.annotations.destructive_hint is False
                start = payload(await c.call_tool("memory_context", {}))
                [block] = start["blocks"]
                assert block["kind"] == "identity"
                assert _sections(block) == [s.to_dict() for s in identity.sections]
                assert _body(start["text"]) == _body(identity.text)

                resource = await c.read_resource("tideline://identity")
                assert _body(resource.contents[0].text) == _body(identity.text)

                # A synonym models use for the message: query.
                during = payload(await c.call_tool("memory_context", {"query": MESSAGE}))
                [block] = during["blocks"]
                assert block["kind"] == "prefetch" and block["query"] == MESSAGE
                assert _sections(block) == [s.to_dict() for s in turn.sections]
                both = payload(
                    await c.call_tool(
                        "memory_context", {"message": MESSAGE, "include_identity": True}
                    )
                )
                assert [b["kind"] for b in both["blocks"]] == ["identity", "prefetch"]

    anyio.run(session)
    assert "Traceback" not in log.read_text()
