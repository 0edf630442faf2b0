"""Sampling where the server cannot ask mid-call (protocol 2026-07-28): one run across rounds.

On such a connection a tool cannot send `sampling/createMessage` while it runs. It answers the
call with an `InputRequiredResult` (the sampling request and an opaque `request_state`), and the
client asks its model and calls the tool again with the answer. A sleep asks its model many
times, each question built from the answers before it, so the run is not replayed per round: it
runs in a thread of its own, and each round of the tool call hands it one answer and waits for
its next question (→ another `InputRequiredResult`) or its end (→ the tool's result).

A client that never comes back leaves the run waiting at most `timeout` seconds for an answer;
the run then fails like any LLM timeout (nothing applied) and is forgotten. `request_state` is
an unguessable token naming the run in this server process.

The SDK client drives at most `input_required_max_rounds` rounds per call (10 by default): one
LLM call per round, so a sleep of more calls needs a client configured for more (docs/mcp.md).
"""

from __future__ import annotations

import queue
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio.from_thread
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CreateMessageRequest, InputRequiredResult

from tideline.consolidate import StepEvent
from tideline.errors import LLMError, LLMUnavailable
from tideline.llm import LLM, NO_LLM, Message, Sample
from tideline.mcp._sampling import sample_of, sampling_request, tool_llm
from tideline.serve import RUN_CALLS

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

    from tideline.mcp._tool_server import Tool, ToolServer

Work = Callable[["RoundSampler"], dict[str, Any]]


@dataclass
class _Ended:
    result: dict[str, Any] | None = None
    error: BaseException | None = None


@dataclass
class _Run:
    token: str
    asked: queue.Queue[tuple[str, CreateMessageRequest] | _Ended] = field(
        default_factory=queue.Queue
    )
    answers: queue.Queue[Sample | BaseException] = field(default_factory=queue.Queue)
    timeout: float = 120.0
    waiting_for: str | None = None
    ended_at: float | None = None


class RoundSampler:
    """A `tideline.llm.Sampler` for a run's own thread: each question goes out as a round."""

    def __init__(self, run: _Run, timeout: float) -> None:
        self._run, self._timeout, self._asked = run, timeout, 0

    def __call__(
        self, messages: Sequence[Message], *, system: str | None, max_tokens: int
    ) -> Sample:
        self._asked += 1
        key = f"sample-{self._asked}"
        self._run.asked.put((key, sampling_request(messages, system, max_tokens)))
        try:
            answer = self._run.answers.get(timeout=self._timeout)
        except queue.Empty:
            raise LLMUnavailable(
                f"the MCP client did not answer sampling request {self._asked} within "
                f"{self._timeout:g}s; call the tool again, or raise TIDELINE_LLM_TIMEOUT"
            ) from None
        if isinstance(answer, BaseException):
            raise answer
        return answer


class Rounds:
    """The runs of this server that wait on a client between rounds, by `request_state`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}

    def start(self, work: Work, timeout: float) -> dict[str, Any] | InputRequiredResult:
        """Start `work(sampler)` in a thread, each answer awaited at most `timeout` seconds;
        its first question or its result."""
        run = _Run(secrets.token_urlsafe(24), timeout=timeout)
        with self._lock:
            self._forget_ended()
            self._runs[run.token] = run
        sampler = RoundSampler(run, timeout)

        def main() -> None:
            try:
                run.asked.put(_Ended(result=work(sampler)))
            except BaseException as exc:  # handed to the tool call that collects it
                run.asked.put(_Ended(error=exc))
            finally:
                run.ended_at = time.monotonic()

        threading.Thread(target=main, name=f"tideline-rounds-{run.token[:6]}", daemon=True).start()
        return self._next(run)

    def resume(
        self, token: str, responses: Mapping[str, Any] | None
    ) -> dict[str, Any] | InputRequiredResult:
        """Hand the client's answer to the run named by `token`; its next question or result."""
        with self._lock:
            run = self._runs.get(token)
        if run is None or run.waiting_for is None:
            raise ToolError(
                "no run waits for this answer (it ended, or waited longer than "
                "TIDELINE_LLM_TIMEOUT for it); call the tool again to start anew"
            )
        key, run.waiting_for = run.waiting_for, None
        answer = (responses or {}).get(key)
        try:
            run.answers.put(sample_of(answer))
        except LLMError as exc:
            run.answers.put(exc)
        return self._next(run)

    def _next(self, run: _Run) -> dict[str, Any] | InputRequiredResult:
        item = run.asked.get()
        if isinstance(item, _Ended):
            with self._lock:
                self._runs.pop(run.token, None)
            if item.error is not None:
                raise item.error
            assert item.result is not None
            return item.result
        key, request = item
        run.waiting_for = key
        return InputRequiredResult(input_requests={key: request}, request_state=run.token)

    def _forget_ended(self) -> None:
        """Runs whose client went away: ended (timed out) and never collected."""
        now = time.monotonic()
        for token, run in list(self._runs.items()):
            if run.ended_at is not None and now - run.ended_at > run.timeout:
                del self._runs[token]


ROUNDS = Rounds()  # one per process: request_state tokens are unique


def with_llm(
    server: ToolServer,
    tool: str,
    ctx: Context[Any],
    work: Callable[[LLM | None, str | None], dict[str, Any]],
) -> dict[str, Any] | InputRequiredResult:
    """`work(llm, reason)` with the LLM this call has: the endpoint, else the client's model —
    asked mid-call, or in `InputRequiredResult` rounds on a connection without a back-channel
    (a retried call carries the answer in `request_state`) — else none and why."""
    if ctx.request_state is not None:
        return ROUNDS.resume(ctx.request_state, ctx.input_responses)
    app = server.app
    llm, reason = tool_llm(ctx, app)
    if llm is None and reason is None:
        return ROUNDS.start(
            lambda sampler: server.call(tool, lambda: work(app.llm_for(sampler), None)),
            app.settings.llm_timeout,
        )
    return server.call(tool, lambda: work(llm, reason))


def add_run(server: ToolServer, spec: Tool) -> None:
    """Add `spec`'s tool as its command's run (`serve.RUN_CALLS`: `sleep_run`, `dream_run`):
    its arguments the command's fields, its LLM the one `with_llm` finds (without one, the LLM
    steps are skipped and `llm_skipped` says why), a progress notification at each step's end."""
    name = str(spec.command.tool)
    run = RUN_CALLS[name]

    def tool(ctx: Context[Any], **arguments: Any) -> dict[str, Any] | InputRequiredResult:
        def work(llm: LLM | None, reason: str | None) -> dict[str, Any]:
            progress = step_progress(ctx, run.steps())
            report = run.start(server.app, (llm, reason or NO_LLM), **arguments)(progress)
            return report.to_dict() | ({"llm_skipped": reason} if reason else {})

        return with_llm(server, name, ctx, work)

    server.add_command(spec, tool)


def step_progress(ctx: Context[Any], total: int) -> Callable[[StepEvent], None]:
    """Progress notifications per step (of `total`: Sleep's steps, Dream's layers), for a
    client that asked for them (a no-op otherwise)."""

    def send(event: StepEvent) -> None:
        if event.phase == "end" and event.n:
            # A lost notification (the client went away) must not fail the run.
            with suppress(Exception):
                anyio.from_thread.run(ctx.report_progress, event.n, total, event.name)

    return send
