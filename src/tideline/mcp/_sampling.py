"""MCP sampling as an LLM backend: the server asks the connected client's own model.

The core defines the seam (`tideline.llm.Sampler`: messages, system prompt, max_tokens → text and
model name); this module fills it with the SDK's `sampling/createMessage` request. It is sent
with `session.send_request` rather than `session.create_message`, which is the same request but
marked deprecated since protocol 2026-07-28 (SEP-2577) and would warn on every call.

Sampling is a server-to-client request, so it needs (1) a client that declared the `sampling`
capability and (2) a connection that can carry server-to-client requests: the initialize-
handshake era (protocol ≤ 2025-11-25) over stdio or streamable HTTP with SSE. Connections on
2026-07-28 have no such back-channel: there the tool answers with `InputRequiredResult` rounds
(`tideline.mcp._rounds`), one sampling request per round. A client without the capability gets
the run skipped with that reason, never failed.

Tools that use it are sync tools: the SDK runs them in a worker thread, and the sampler blocks
that thread on `anyio.from_thread.run` while the event loop talks to the client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio.from_thread
from mcp.server.mcpserver import Context
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types import (
    ClientCapabilities,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    SamplingCapability,
    SamplingMessage,
    TextContent,
)

from tideline.app import Tideline
from tideline.errors import LLMError
from tideline.llm import LLMClient, Message, Sample

ROUNDS_VERSION = "2026-07-28"  # the first protocol whose tools ask through InputRequiredResult


class ClientSampler:
    """A `tideline.llm.Sampler` over one MCP session; call it from a tool's worker thread."""

    def __init__(self, session: ServerSession) -> None:
        self._session = session

    def __call__(
        self, messages: Sequence[Message], *, system: str | None, max_tokens: int
    ) -> Sample:
        return anyio.from_thread.run(self._ask, list(messages), system, max_tokens)

    async def _ask(self, messages: list[Message], system: str | None, max_tokens: int) -> Sample:
        request = sampling_request(messages, system, max_tokens)
        try:
            result = await self._session.send_request(request, CreateMessageResult)
        except MCPError as exc:
            raise LLMError(
                f"the MCP client's model refused the sampling request ({exc.error.message}); "
                "approve sampling in the client or set TIDELINE_LLM_BASE_URL"
            ) from None
        return sample_of(result)


def sampling_request(
    messages: Sequence[Message], system: str | None, max_tokens: int
) -> CreateMessageRequest:
    """`sampling/createMessage` for these messages (user and assistant turns only)."""
    return CreateMessageRequest(
        params=CreateMessageRequestParams(
            messages=[
                SamplingMessage(
                    role="assistant" if m["role"] == "assistant" else "user",
                    content=TextContent(type="text", text=m["content"]),
                )
                for m in messages
            ],
            system_prompt=system,
            max_tokens=max_tokens,
        )
    )


def sample_of(result: Any) -> Sample:
    """The client's answer as a `Sample`, or `LLMError` if it is not a text answer."""
    if not isinstance(result, CreateMessageResult):
        raise LLMError(
            f"the MCP client answered the sampling request with {type(result).__name__}, not a "
            "message; answer it with the model's text"
        )
    if not isinstance(result.content, TextContent):
        raise LLMError(
            f"the MCP client's model ({result.model}) answered with {result.content.type} "
            "content instead of text; use a text model in the client"
        )
    return Sample(result.content.text, result.model)


def sampling_unavailable(ctx: Context[Any]) -> str | None:
    """Why the client's model cannot be asked on this connection, or None when it can."""
    session = ctx.session
    if not session.check_client_capability(ClientCapabilities(sampling=SamplingCapability())):
        return (
            "skipped: the MCP client does not offer sampling (no `sampling` capability) and no "
            "LLM is configured (set TIDELINE_LLM_BASE_URL and TIDELINE_LLM_MODEL)"
        )
    if not session.can_send_request and not in_rounds(ctx):
        return (
            f"skipped: this MCP connection (protocol {session.protocol_version}) cannot carry "
            "sampling requests to the client; connect with the initialize handshake or set "
            "TIDELINE_LLM_BASE_URL and TIDELINE_LLM_MODEL"
        )
    return None


def in_rounds(ctx: Context[Any]) -> bool:
    """Sampling on this connection goes in rounds: `InputRequiredResult` (tideline.mcp._rounds)."""
    version = ctx.protocol_version
    return not ctx.session.can_send_request and version is not None and version >= ROUNDS_VERSION


def tool_llm(ctx: Context[Any], app: Tideline) -> tuple[LLMClient | None, str | None]:
    """The LLM a tool should use (`Tideline.llm_for`: the endpoint, else the client's model over
    this connection), and the skip reason when there is none. (None, None): the connection is
    in rounds, and the tool runs the work through `Rounds`."""
    reason = sampling_unavailable(ctx)
    sampler = ClientSampler(ctx.session) if reason is None and not in_rounds(ctx) else None
    llm = app.llm_for(sampler)
    return llm, None if llm is not None else reason
