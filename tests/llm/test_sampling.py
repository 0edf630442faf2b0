"""MCP sampling through the real SDK client: a server tool asks the client's own model.

The client's "model" is its `sampling_callback` (scripted answers); the server is a
`ToolServer` in memory, its tool a sync tool that calls `tool_llm` like the sleep tool will.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from tests.helpers import wait_until
from tests.llm.conftest import GOOD, Facts
from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import LLMUnavailable, TidelineError
from tideline.llm import LLM, JsonSchema, Sampler, TokenMeter
from tideline.mcp import ToolServer
from tideline.mcp._rounds import ROUNDS, with_llm


def extraction_server(settings: Settings) -> ToolServer:
    server = ToolServer(Tideline(settings), name="tideline-test")

    @server.tool()
    def extract(text: str, ctx: Context) -> dict[str, Any] | types.InputRequiredResult:
        """Extract facts with whichever LLM this connection offers."""
        return with_llm(server, "extract", ctx, lambda llm, reason: work(llm, reason, text))

    def work(llm: LLM | None, reason: str | None, text: str) -> dict[str, Any]:
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


def test_the_sdk_clients_default_connection_samples_in_rounds(settings: Settings) -> None:
    model = ClientModel('{"facts": [{"subject": "user"}]}', GOOD.model_dump_json())
    out = call(extraction_server(settings), "auto", model)  # 2026-07-28: InputRequiredResult
    assert out["facts"] == GOOD.model_dump()["facts"] and out["model"] == "client-model-1"
    assert out["attempts"] == 2 and out["tokens"]["calls"] == 2  # the repair was a round too
    first, repair = model.asked
    assert JsonSchema.of(Facts).text in first.system_prompt and first.max_tokens == 300
    assert [m.role for m in repair.messages] == ["user", "assistant", "user"]


def test_in_rounds_a_client_without_sampling_is_skipped_with_a_reason(settings: Settings) -> None:
    out = call(extraction_server(settings), "auto", None)
    assert out["skipped"].startswith("skipped: the MCP client does not offer sampling")


def test_an_answer_for_a_run_that_ended_is_one_clean_error() -> None:
    with pytest.raises(ToolError, match=r"no run waits for this answer .* call the tool again"):
        ROUNDS.resume("a-run-that-timed-out", {})


def test_a_client_that_never_answers_fails_the_run_in_one_line() -> None:
    gave_up = threading.Event()

    def work(sampler: Sampler) -> dict[str, Any]:
        try:
            return {"said": sampler([{"role": "user", "content": "hi"}], system=None, max_tokens=5)}
        finally:
            gave_up.set()

    asked = ROUNDS.start(work, timeout=0.2)
    assert isinstance(asked, types.InputRequiredResult) and asked.request_state
    wait_until(gave_up.is_set, timeout=10)  # the client did not come back in time
    with pytest.raises(LLMUnavailable, match=r"did not answer sampling request 1 within 0.2s") as e:
        ROUNDS.resume(asked.request_state, {})  # ... and comes back late
    assert "\n" not in str(e.value)
