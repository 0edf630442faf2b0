"""Any OpenAI-compatible chat completions endpoint (ollama, vLLM, llama.cpp server, hosted APIs).

Through the `openai` package with its own retries off, because ours must be bounded and tunable:
429, 5xx and connection errors are retried `max_retries` times, waiting Retry-After when the
server sends one, else `backoff` doubling, every wait capped at `backoff_max`. A timeout is not
retried (a model too slow once is slow again); it fails at once with the setting to raise.

Structured output climbs down a ladder, once per client: `json_schema` (the server enforces the
schema) → `json_object` (JSON mode, schema in the prompt) → `prompt` (schema in the prompt only).
A 400/422 that names the response format moves one rung down, is remembered, and raises
`FormatRefused` so the client re-checks the (now longer) prompt against the input cap and asks
again: a server that lacks json_schema costs one refused request per client, not one per call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import openai

from tideline.embed import estimate_tokens
from tideline.errors import ConfigError, LLMError, LLMUnavailable
from tideline.llm._protocol import FormatRefused
from tideline.llm._structured import JsonSchema, with_instruction
from tideline.llm._types import Message, Mode, Reply, Usage

_LADDER: tuple[Mode, ...] = ("json_schema", "json_object", "prompt")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "json mode", "unsupported")
# Which pipeline step asked: for logs, proxies and the test server; LLM servers ignore it.
STEP_HEADER = "X-Tideline-Step"


class OpenAIChat:
    """A `ChatBackend` over `POST {base_url}/chat/completions`."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        timeout: float = 120.0,
        max_retries: int = 4,
        backoff: float = 1.0,
        backoff_max: float = 30.0,
        structured: str = "auto",
    ) -> None:
        if not base_url or not model:
            raise ConfigError(
                "the LLM client needs TIDELINE_LLM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for "
                "ollama) and TIDELINE_LLM_MODEL (the model name the server serves)"
            )
        if structured not in ("auto", *_LADDER):
            raise ConfigError(
                f"TIDELINE_LLM_STRUCTURED must be auto, json_schema, json_object or prompt, "
                f"got {structured!r}"
            )
        self.url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.max_retries = max(0, max_retries)
        self.backoff = max(0.0, backoff)
        self.backoff_max = max(0.0, backoff_max)
        self.timeout = timeout
        self.auto = structured == "auto"
        self.mode: Mode = "json_schema" if self.auto else structured  # type: ignore[assignment]
        # An explicit placeholder key: without one the package would read OPENAI_API_KEY from the
        # environment and send a real OpenAI key to whatever server base_url names.
        self._client = openai.OpenAI(
            base_url=self.url, api_key=api_key or "none", timeout=timeout, max_retries=0
        )

    def overhead(self, schema: JsonSchema | None) -> int:
        return estimate_tokens(schema.instruction) if schema and self.mode != "json_schema" else 0

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        schema: JsonSchema | None,
        step: str,
    ) -> Reply:
        mode: Mode = self.mode if schema else "text"
        try:
            return self._request(messages, max_tokens, schema, mode, step)
        except openai.APIStatusError as exc:
            if schema and self.auto and mode != "prompt" and _format_refused(exc):
                self.mode = _LADDER[_LADDER.index(mode) + 1]
                raise FormatRefused(mode) from None
            raise LLMError(
                f"LLM endpoint {self.url} refused step {step!r} (HTTP {exc.status_code}: "
                f"{_detail(exc)}); check TIDELINE_LLM_MODEL and TIDELINE_LLM_API_KEY"
            ) from None

    def _request(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        schema: JsonSchema | None,
        mode: Mode,
        step: str,
    ) -> Reply:
        extra: dict[str, Any] = {}
        sent = list(messages)
        if schema is not None and mode == "json_schema":
            extra["response_format"] = schema.response_format()
        elif schema is not None:
            sent = with_instruction(messages, schema)
            if mode == "json_object":
                extra["response_format"] = {"type": "json_object"}
        resp = self._create(sent, max_tokens, step, extra)
        try:
            choice = resp.choices[0]
            text = choice.message.content or ""
        except (IndexError, AttributeError, TypeError):
            raise LLMError(
                f"LLM endpoint {self.url} answered step {step!r} without a message; is it an "
                "OpenAI-compatible chat completions API?"
            ) from None
        if resp.usage is not None:
            usage = Usage(resp.usage.prompt_tokens or 0, resp.usage.completion_tokens or 0)
        else:  # some servers omit usage; count what we sent and got, and say it is an estimate
            est = sum(estimate_tokens(m["content"]) for m in sent)
            usage = Usage(est, estimate_tokens(text), estimated=True)
        return Reply(text, usage, resp.model or self.model, mode, choice.finish_reason == "length")

    def _create(
        self, messages: list[Message], max_tokens: int, step: str, extra: dict[str, Any]
    ) -> Any:
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                return self._client.chat.completions.create(
                    model=self.model,
                    messages=messages,  # type: ignore[arg-type]
                    max_tokens=max_tokens,
                    extra_headers={STEP_HEADER: step},
                    **extra,
                )
            except openai.APITimeoutError:
                raise LLMUnavailable(
                    f"LLM endpoint {self.url} did not answer step {step!r} within "
                    f"{self.timeout:g}s; raise TIDELINE_LLM_TIMEOUT or use a faster model"
                ) from None
            except openai.APIConnectionError as exc:
                last = f"connection failed: {type(exc.__cause__ or exc).__name__}"
                wait = self._backoff(attempt)
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500:
                    raise
                last = f"HTTP {exc.status_code}"
                wait = _retry_after(exc)
                wait = self._backoff(attempt) if wait is None else min(wait, self.backoff_max)
            if attempt < self.max_retries:
                time.sleep(wait)
        raise LLMUnavailable(
            f"LLM endpoint {self.url} failed step {step!r} after {self.max_retries + 1} tries "
            f"({last}); start the server, check TIDELINE_LLM_BASE_URL, or retry the run later"
        )

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff * 2**attempt, self.backoff_max)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (Retry-After or retry-after-ms), if it said."""
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale)
        except (KeyError, ValueError):
            continue
    return None


def _format_refused(exc: openai.APIStatusError) -> bool:
    """A 400/422 about the response format: the server lacks this structured-output mode."""
    text = _detail(exc).lower()
    return exc.status_code in (400, 422) and any(w in text for w in _FORMAT_WORDS)


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return " ".join(str(message).split())[:200]
    return " ".join(exc.message.split())[:200]
