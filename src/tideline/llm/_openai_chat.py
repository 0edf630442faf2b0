"""Any OpenAI-compatible chat completions endpoint (ollama, vLLM, llama.cpp server, hosted APIs).

Through `tideline.http.JsonApi`, the one client of the model servers' APIs, so its policy is the
embedder's: 429, 5xx, connection errors and bodies that are not complete JSON are retried
`retries.retries` times, waiting Retry-After when the server sends one, else `backoff` doubling,
every wait capped at `backoff_max`. A timeout is not retried (a model too slow once is slow
again); it fails at once with the setting to raise. Answer bodies are bounded in bytes (2 MiB)
and seconds before they are parsed.

Structured output climbs down a ladder: `json_schema` (the server enforces the schema) →
`json_object_schema` (`{"type": "json_object", "schema": …}`: llama.cpp's grammar enforces it) →
`json_object` (JSON mode, schema in the prompt) → `prompt` (schema in the prompt only). A 400,
422 or 500 that names the response format moves one rung down at once (a 500 about the format is
not retried), is remembered for the endpoint (`tideline.llm._endpoint`), and raises
`FormatRefused` so the client re-checks the (maybe longer) prompt against the input cap and
asks again.

A context-overflow error is not retried either: it becomes `InputTooLong` naming the server's
window, and the window is remembered so later prompts are sized to it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tideline.embed import estimate_tokens
from tideline.errors import ConfigError, FormatRefused, InputTooLong, LLMError, LLMUnavailable
from tideline.http import MAX_BODY, Answer, JsonApi, Retries, Unanswered
from tideline.llm._endpoint import ENDPOINTS, LADDER, names_format, overflow_window, window_of
from tideline.llm._messages import Message, Mode, Reply, Usage
from tideline.llm._structured import JsonSchema, with_instruction

IN_PROMPT: tuple[Mode, ...] = ("json_object", "prompt")  # the rungs that send the schema text
# Which pipeline step asked: for logs, proxies and the test server; LLM servers ignore it.
STEP_HEADER = "X-Tideline-Step"
PROBE_SECONDS = 5.0  # asking a server its context window must not hold a run up
_USAGE_MAX = 10**9  # a usage count past this is not a count
RETRIES = Retries(4, 1.0, 30.0)  # the settings' defaults (llm_max_retries, llm_backoff, …)


class OpenAIChat:
    """A `ChatBackend` over `POST {base_url}/chat/completions`."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        timeout: float = 120.0,
        retries: Retries = RETRIES,
        structured: str = "auto",
        max_body: int = MAX_BODY,
    ) -> None:
        if not base_url or not model:
            raise ConfigError(
                "the LLM client needs TIDELINE_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for "
                "ollama) and TIDELINE_LLM_MODEL (the model name the server serves)"
            )
        if structured not in ("auto", *LADDER):
            raise ConfigError(
                "TIDELINE_LLM_STRUCTURED must be auto, json_schema, json_object_schema, "
                f"json_object or prompt, got {structured!r}"
            )
        self._api = JsonApi(base_url, api_key, timeout=timeout, retries=retries, max_body=max_body)
        self.url = self._api.url
        self.model = model
        self.name = f"openai:{model}"
        self.timeout = timeout
        self.auto = structured == "auto"
        self._pinned: Mode | None = None if self.auto else structured  # type: ignore[assignment]
        self._known = ENDPOINTS.get(self.url, model)
        self._settled = not self.auto

    @property
    def mode(self) -> Mode:
        """The structured-output rung requests use now (pinned, or what the endpoint taught)."""
        return self._pinned or self._known.mode

    @property
    def settled(self) -> bool:
        """Whether `mode` is known to work (pinned, or a structured answer came back in it)."""
        return self._settled

    def overhead(self, schema: JsonSchema | None) -> int:
        return estimate_tokens(schema.instruction) if schema and self.mode in IN_PROMPT else 0

    def window(self) -> int | None:
        """The server's context window in tokens, asked once per endpoint (None: it won't say)."""
        known = self._known
        if not known.probed:
            known.probed = True
            models = self._api.get(self.url + "/models", timeout=PROBE_SECONDS)
            props = self._api.get(_root(self.url), timeout=PROBE_SECONDS)
            known.window = known.window or window_of(models, props, self.model)
        return known.window

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        schema: JsonSchema | None,
        step: str,
    ) -> Reply:
        mode: Mode = self.mode if schema else "text"
        sent, extra = _body(messages, schema, mode)

        def final(answer: Answer) -> bool:  # the server lacks this form: retrying won't help
            return "response_format" in extra and names_format(answer.status, answer.detail())

        got = self._api.post(
            "/chat/completions",
            {"model": self.model, "messages": sent, "max_tokens": max_tokens, **extra},
            headers={STEP_HEADER: step},
            final=final,
        )
        if isinstance(got, Unanswered):
            raise self._unanswered(got, step, max_tokens)
        if not got.ok:
            detail = got.detail()
            if schema and self.auto and mode != "prompt" and names_format(got.status, detail):
                ENDPOINTS.step_down(self.url, self.model, mode)
                raise FormatRefused(mode)
            window = overflow_window(detail)
            if window is not None:
                raise self._overflow(step, window, max_tokens, detail)
            if got.status == 404 and "model" not in detail.lower():
                raise self._no_such_page(step)
            raise LLMError(
                f"LLM endpoint {self.url} refused step {step!r} (HTTP {got.status}: "
                f"{detail}); check TIDELINE_LLM_MODEL and TIDELINE_LLM_API_KEY"
            )
        reply = self._reply(got.data, sent, mode, step)
        if schema:
            self._settled = True
        return reply

    def _no_such_page(self, step: str) -> LLMError:
        """A 404 that is not about the model: nothing serves the chat API at that address (a
        base URL without its /v1, a web server's page). The page itself says nothing useful."""
        return LLMError(
            f"LLM endpoint {self.url}/chat/completions answered step {step!r} with HTTP 404 (no "
            "such page): no OpenAI-compatible API is at that address; set TIDELINE_LLM_BASE_URL "
            "to where the API's paths start, usually ending in /v1 (http://127.0.0.1:11434/v1 "
            "for ollama)"
        )

    def _unanswered(self, got: Unanswered, step: str, max_tokens: int) -> LLMError:
        if got.why == "timeout":
            return LLMUnavailable(
                f"LLM endpoint {self.url} did not answer step {step!r} within "
                f"{self.timeout:g}s; raise TIDELINE_LLM_TIMEOUT or use a faster model"
            )
        if got.why == "too_large":
            return LLMError(
                f"LLM endpoint {self.url} answered step {step!r} with a body over "
                f"{self._api.max_body:,} bytes (max_tokens was {max_tokens}), which was not "
                "read further; check that the server honours max_tokens"
            )
        return LLMUnavailable(
            f"LLM endpoint {self.url} failed step {step!r} after {got.tries} tries "
            f"({got.last}); start the server, check TIDELINE_LLM_BASE_URL, or retry the run later"
        )

    def _overflow(self, step: str, window: int, max_tokens: int, detail: str) -> InputTooLong:
        if window:
            self._known.window = window
        size = f"its {window}-token context window" if window else "its context window"
        return InputTooLong(
            f"step {step!r}: LLM endpoint {self.url} says the prompt and the answer's "
            f"max_tokens={max_tokens} do not fit {size} ({detail}); start the server with a "
            "larger context (llama.cpp: --n_ctx) or lower TIDELINE_LLM_MAX_INPUT_TOKENS"
        )

    def _reply(self, data: Any, sent: list[Message], mode: Mode, step: str) -> Reply:
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
            if not isinstance(text, str):
                raise TypeError(type(text).__name__)
        except (IndexError, TypeError, KeyError):
            raise LLMError(
                f"LLM endpoint {self.url} answered step {step!r} without a message; is it an "
                "OpenAI-compatible chat completions API?"
            ) from None
        usage = _usage(data.get("usage"))
        if usage is None:  # some servers omit usage; count what we sent and got, and say so
            est = sum(estimate_tokens(m["content"]) for m in sent)
            usage = Usage(est, estimate_tokens(text), estimated=True)
        model = data.get("model")
        model = model if isinstance(model, str) and model else self.model
        return Reply(text, usage, model[:200], mode, choice.get("finish_reason") == "length")


def _body(
    messages: Sequence[Message], schema: JsonSchema | None, mode: Mode
) -> tuple[list[Message], dict[str, Any]]:
    """The messages to send and the request's `response_format`, for the structured-output rung."""
    if schema is None:
        return list(messages), {}
    if mode == "json_schema":
        return list(messages), {"response_format": schema.response_format()}
    if mode == "json_object_schema":
        return list(messages), {
            "response_format": {"type": "json_object", "schema": schema.for_grammar()}
        }
    sent = with_instruction(messages, schema)
    return sent, {"response_format": {"type": "json_object"}} if mode == "json_object" else {}


def _root(url: str) -> str:
    """llama.cpp's `/props` sits beside `/v1`, not under it."""
    return (url[: -len("/v1")] if url.endswith("/v1") else url) + "/props"


def _usage(usage: Any) -> Usage | None:
    """The server's token counts, if it sent believable ones."""
    if not isinstance(usage, dict):
        return None
    counts = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    if not all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n < _USAGE_MAX for n in counts
    ):
        return None
    return Usage(counts[0] or 0, counts[1] or 0)
