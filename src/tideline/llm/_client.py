"""`LLMClient`: the one implementation of `LLM`, over any `ChatBackend`.

Every call goes through the same gate, whichever backend answers:
1. the input cap: a prompt over `max_input_tokens` (estimated) is refused with `InputTooLong` —
   the caller knows what matters in its context and must trim it, the client never cuts silently;
2. the run's budget: `TokenMeter.check` before each request, so `BudgetExceeded` comes before
   the spend;
3. structured answers are validated with pydantic; a failure gets ONE repair request that sends
   the validation error back, and a second failure raises a one-line `LLMError`;
4. every request's usage is recorded on the meter under its step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from tideline.embed import estimate_tokens
from tideline.errors import InputTooLong, LLMError
from tideline.llm._meter import TokenMeter
from tideline.llm._protocol import ChatBackend, FormatRefused
from tideline.llm._structured import JsonSchema, describe, parse, repair_request
from tideline.llm._types import Message, Reply, Result, Usage


def prompt_tokens(messages: Sequence[Message]) -> int:
    """Estimated prompt size: the text plus a few tokens of framing per message."""
    return sum(estimate_tokens(m["content"]) + 4 for m in messages)


class LLMClient:
    """Structured, capped, metered completions over one backend."""

    def __init__(
        self, backend: ChatBackend, *, max_input_tokens: int = 24000, max_output_tokens: int = 2000
    ) -> None:
        self.backend = backend
        self.name = backend.name
        self.max_input_tokens = max_input_tokens
        self.max_output_tokens = max_output_tokens

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        step: str,
        max_tokens: int | None = None,
        meter: TokenMeter | None = None,
    ) -> Result[Any]:
        """One answer for one step; validated against `schema` when given (see the module doc)."""
        limit = max_tokens or self.max_output_tokens
        wire = JsonSchema.of(schema) if schema is not None else None
        convo = list(messages)
        usage = Usage()
        for attempt in (1, 2):
            reply = self._send(convo, wire, step, limit, meter)
            usage += reply.usage
            if schema is None or wire is None:
                return Result(None, reply.text, usage, reply.model, step, reply.mode, attempt)
            try:
                data = parse(reply.text, schema)
            except ValidationError as exc:
                problem = describe(exc)
                if reply.truncated:
                    problem = f"the answer stopped at max_tokens={limit} ({problem})"
                if attempt == 2:
                    raise LLMError(
                        f"step {step!r}: {self.name} answered twice with output that does not "
                        f"fit the {wire.name} schema ({problem}); use a stronger model or raise "
                        "the step's max_tokens"
                    ) from None
                convo += [
                    {"role": "assistant", "content": reply.text},
                    repair_request(problem, wire),
                ]
                continue
            return Result(data, reply.text, usage, reply.model, step, reply.mode, attempt)
        raise AssertionError("unreachable")

    def _send(
        self,
        messages: list[Message],
        schema: JsonSchema | None,
        step: str,
        max_tokens: int,
        meter: TokenMeter | None,
    ) -> Reply:
        while True:
            size = prompt_tokens(messages) + self.backend.overhead(schema)
            if size > self.max_input_tokens:
                raise InputTooLong(
                    f"step {step!r}: the prompt is ~{size} tokens, over the "
                    f"{self.max_input_tokens}-token input cap (TIDELINE_LLM_MAX_INPUT_TOKENS); send "
                    "less context per call or raise the cap to what the model's context holds"
                )
            if meter is not None:
                meter.check(step, size, max_tokens)
            try:
                reply = self.backend.chat(messages, max_tokens=max_tokens, schema=schema, step=step)
            except FormatRefused:
                continue  # the backend moved to a weaker mode; its prompt may be longer now
            if meter is not None:
                meter.record(step, reply.usage)
            return reply
