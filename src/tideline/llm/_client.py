"""`LLMClient`: the one implementation of `LLM`, over any `ChatBackend`.

Every call goes through the same gate, whichever backend answers:
1. the input cap: a prompt over the cap (estimated) is refused with `InputTooLong` — the caller
   knows what matters in its context and must trim it, the client never cuts silently. The cap
   is `max_input_tokens`, or less when the server's context window is known: the window (less a
   margin for the estimate) must hold the prompt AND the answer, whose `max_tokens` is then at
   most a quarter of the window;
2. the run's budget: `TokenMeter.check` before each request, so `BudgetExceeded` comes before
   the spend;
3. structured answers are validated with pydantic; a failure gets ONE repair request that sends
   the validation error back (and the wrong answer, cut to a few thousand characters), and a
   second failure raises a one-line `LLMError` — unless all that is still wrong is strings over
   their `maxLength`: those are cut to it. Lists over their `Items` cap are cut at once, not
   failed. Every cut comes back in `Result.cuts`;
4. every request's usage is recorded on the meter under its step, as soon as it is answered.

`room()` tells a step, before it builds its prompt, how many tokens its own context may take
after the system prompt, the schema (counted while the server's structured-output form is not
yet known to work) and the framing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from tideline.embed import estimate_tokens
from tideline.errors import FormatRefused, InputTooLong, LLMError
from tideline.llm._messages import Message, Reply, Result, Usage
from tideline.llm._meter import TokenMeter
from tideline.llm._protocol import ChatBackend
from tideline.llm._structured import (
    JsonSchema,
    describe,
    echo,
    parse,
    parse_cutting_strings,
    repair_request,
)

WINDOW_SHARE = 0.85  # of a known context window: the estimate is good to ~±30%, templates add
MIN_ANSWER = 64
FRAMING = 32  # tokens of chat template and message framing a call adds


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

    def limits(self, max_tokens: int | None = None) -> tuple[int, int]:
        """(input cap, answer max_tokens) for a call: the settings, fitted to a known window."""
        answer = max_tokens or self.max_output_tokens
        window = self.backend.window()
        if not window:
            return self.max_input_tokens, answer
        answer = min(answer, max(MIN_ANSWER, window // 4))
        return max(0, min(self.max_input_tokens, int(window * WINDOW_SHARE) - answer)), answer

    def room(
        self, system: str, schema: type[BaseModel] | None = None, max_tokens: int | None = None
    ) -> int:
        cap, _ = self.limits(max_tokens)
        wire = JsonSchema.of(schema) if schema is not None else None
        overhead = self.backend.overhead(wire)
        if wire is not None and not self.backend.settled:
            overhead = max(overhead, estimate_tokens(wire.instruction))
        return max(0, cap - estimate_tokens(system) - overhead - FRAMING)

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
        wire = JsonSchema.of(schema) if schema is not None else None
        convo = list(messages)
        usage = Usage()
        for attempt in (1, 2):
            reply, limit = self._send(convo, wire, step, max_tokens, meter)
            usage += reply.usage
            if schema is None or wire is None:
                return Result(None, reply.text, usage, reply.model, step, reply.mode, attempt)
            cuts: list[str] = []
            try:
                if attempt == 1:
                    data = parse(reply.text, schema, cuts)
                else:  # the repair did not help: cut what is only too long, fail on the rest
                    data = parse_cutting_strings(reply.text, schema, cuts)
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
                    {"role": "assistant", "content": echo(reply.text)},
                    repair_request(problem, wire),
                ]
                continue
            return Result(
                data, reply.text, usage, reply.model, step, reply.mode, attempt, tuple(cuts)
            )
        raise AssertionError("unreachable")

    def _send(
        self,
        messages: list[Message],
        schema: JsonSchema | None,
        step: str,
        max_tokens: int | None,
        meter: TokenMeter | None,
    ) -> tuple[Reply, int]:
        while True:
            cap, answer = self.limits(max_tokens)
            size = prompt_tokens(messages) + self.backend.overhead(schema)
            if size > cap:
                raise InputTooLong(self._too_long(step, size, cap, answer))
            if meter is not None:
                meter.check(step, size, answer)
            try:
                reply = self.backend.chat(messages, max_tokens=answer, schema=schema, step=step)
            except FormatRefused:
                continue  # the backend moved to a weaker mode; its prompt may be longer now
            if meter is not None:
                meter.record(step, reply.usage)
            return reply, answer

    def _too_long(self, step: str, size: int, cap: int, answer: int) -> str:
        window = self.backend.window()
        if window and cap < self.max_input_tokens:
            return (
                f"step {step!r}: the prompt is ~{size} tokens, over the {cap}-token input cap "
                f"that the server's {window}-token context window leaves beside a {answer}-token "
                "answer; send less context per call or start the server with a larger context"
            )
        return (
            f"step {step!r}: the prompt is ~{size} tokens, over the {cap}-token input cap "
            "(TIDELINE_LLM_MAX_INPUT_TOKENS); send less context per call or raise the cap to "
            "what the model's context holds"
        )
