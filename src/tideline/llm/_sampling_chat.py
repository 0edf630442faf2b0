"""The second backend: ask the connected MCP client's own model (no endpoint, no key).

The core never sees the MCP SDK: the driver hands in a `Sampler` (tideline.mcp._sampling wraps
`sampling/createMessage`). Sampling has no JSON mode and reports no token counts, so the schema
always goes into the system prompt and usage is estimated from the text (flagged `estimated`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tideline.embed import estimate_tokens
from tideline.llm._messages import Message, Reply, Usage
from tideline.llm._protocol import Sampler
from tideline.llm._structured import JsonSchema, with_instruction


class SamplingChat:
    """A `ChatBackend` that forwards each request to a `Sampler`."""

    name = "mcp-sampling"
    settled = True  # always the prompt: sampling has no JSON mode

    def __init__(self, sampler: Sampler) -> None:
        self._sampler = sampler

    def overhead(self, schema: JsonSchema | None) -> int:
        return estimate_tokens(schema.instruction) if schema else 0

    def window(self) -> int | None:
        return None  # the client's model does not say

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        schema: JsonSchema | None,
        step: str,
    ) -> Reply:
        sent = with_instruction(messages, schema) if schema else list(messages)
        system = "\n\n".join(m["content"] for m in sent if m["role"] == "system") or None
        turns = [m for m in sent if m["role"] != "system"]
        sample = self._sampler(turns, system=system, max_tokens=max_tokens)
        usage = Usage(
            sum(estimate_tokens(m["content"]) for m in sent),
            estimate_tokens(sample.text),
            estimated=True,
        )
        return Reply(sample.text, usage, sample.model, "prompt" if schema else "text")
