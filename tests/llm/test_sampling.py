"""MCP sampling through the real SDK client: a server tool asks the client's own model.

The client's "model" is its `sampling_callback` (scripted answers); the server is a
`ToolServer` in memory, its tool a sync tool that calls `tool_llm` like the sleep tool will.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context

from tests.llm.conftest import GOOD, Facts, llm_settings
from tests.llm_server import LLMServer
from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import TidelineError
from tideline.llm import JsonSchema, TokenMeter
from tideline.mcp import ToolServer
from tideline.mcp._sampling import tool_llm


def extraction_server(settings: Settings) -> ToolServer:
    server = ToolServer(Tideline(settings), name="tideline-test")

    @server.tool()
    def extract(text: str, ctx: Context) -> dict[str, Any]:
        """Extract facts with whichever LLM this connection offers."""
        llm, reason = tool_llm(ctx, settings)
        if llm is None:
            return {"skipped": reason}
        meter = TokenMeter()
        try:
            result = llm.complete(
                [
                    {"role": "system", "content": "You extract facts about the user."},
                    {"role": "user", "content": text},
                ],
                schema=Facts,
                step="extract",
                max_tokens=300,
                meter=meter,
            )
        except TidelineError as exc:
            return {"error": str(exc)}
        return {
            "facts": result.data.model_dump()["facts"],
            "model": result.model,
            "attempts": result.attempts,
            "tokens": meter.summary(),
        }

    return server


class ClientModel:
    """The MCP client's model: replays answers and records what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[types.CreateMessageRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=self.answers.pop(0)),
            model="client-model-1",
        )


def call(server: ToolServer, mode: str, model: ClientModel | None) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with Client(server, sampling_callback=model, mode=mode) as client:
            result = await client.call_tool("extract", {"text": "I live in Tokyo."})
            assert not result.is_error, result.content
            return json.loads(result.content[0].text)

    return anyio.run(go)


def test_the_tool_gets_validated_json_from_the_clients_model(settings: Settings) -> None:
    model = ClientModel('{"facts": [{"subject": "user"}]}', GOOD.model_dump_json())
    out = call(extraction_server(settings), "legacy", model)
    assert out["facts"] == GOOD.model_dump()["facts"]
    assert (out["model"], out["attempts"]) == ("client-model-1", 2)
    assert out["tokens"]["calls"] == 2 and out["tokens"]["estimated"] is True
    first, repair = model.asked
    assert first.system_prompt.startswith("You extract facts about the user.")
    assert JsonSchema.of(Facts).text in first.system_prompt  # no JSON mode: the prompt
    assert [m.role for m in first.messages] == ["user"] and first.max_tokens == 300
    assert [m.role for m in repair.messages] == ["user", "assistant", "user"]
    assert "facts.0.value: Field required" in repair.messages[-1].content.text


def test_schema_invalid_twice_over_sampling_is_an_llm_error(settings: Settings) -> None:
    model = ClientModel("not json", "still not json")
    out = call(extraction_server(settings), "legacy", model)
    assert "answered twice" in out["error"] and "mcp-sampling" in out["error"]


def test_a_client_without_sampling_is_skipped_with_a_reason(settings: Settings) -> None:
    out = call(extraction_server(settings), "legacy", None)
    assert out["skipped"].startswith("skipped: the MCP client does not offer sampling")


def test_a_connection_without_back_channel_is_skipped_with_a_reason(settings: Settings) -> None:
    out = call(extraction_server(settings), "auto", ClientModel())  # 2026-07-28: no back-channel
    assert "cannot carry sampling requests" in out["skipped"] and "2026-07-28" in out["skipped"]


def test_a_configured_endpoint_wins_over_sampling() -> None:
    with LLMServer() as server:
        server.script(GOOD)
        model = ClientModel()
        out = call(extraction_server(llm_settings(server.url)), "legacy", model)
        assert out["model"] == "scripted-model" and not model.asked and len(server.chats) == 1
