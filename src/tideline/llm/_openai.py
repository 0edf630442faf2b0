"""Any OpenAI-compatible chat completions endpoint (ollama, vLLM, llama.cpp server, hosted APIs).

Through the `openai` package with its own retries off, because ours must be bounded and tunable:
429, 5xx, connection errors and bodies that are not complete JSON are retried `max_retries`
times, waiting Retry-After when the server sends one, else `backoff` doubling, every wait capped
at `backoff_max`. A timeout is not retried (a model too slow once is slow again); it fails at
once with the setting to raise. Answer bodies are bounded in bytes and seconds before they are
parsed (`tideline.llm._http`).

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

import json
import time
import weakref
from collections.abc import Sequence
from typing import Any

import httpx2
import openai

from tideline.embed import estimate_tokens
from tideline.errors import ConfigError, InputTooLong, LLMError, LLMUnavailable
from tideline.llm._endpoint import ENDPOINTS, LADDER, names_format, overflow_window, window_of
from tideline.llm._http import MAX_BODY, AnswerTooLarge, AnswerTooSlow, http_client
from tideline.llm._protocol import FormatRefused
from tideline.llm._structured import JsonSchema, with_instruction
from tideline.llm._types import Message, Mode, Reply, Usage

IN_PROMPT: tuple[Mode, ...] = ("json_object", "prompt")  # the rungs that send the schema text
# Which pipeline step asked: for logs, proxies and the test server; LLM servers ignore it.
STEP_HEADER = "X-Tideline-Step"
PROBE_SECONDS = 5.0  # asking a server its context window must not hold a run up
_USAGE_MAX = 10**9  # a usage count past this is not a count


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
        self.url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.max_retries = max(0, max_retries)
        self.backoff = max(0.0, backoff)
        self.backoff_max = max(0.0, backoff_max)
        self.timeout = timeout
        self.auto = structured == "auto"
        self._pinned: Mode | None = None if self.auto else structured  # type: ignore[assignment]
        self._known = ENDPOINTS.get(self.url, model)
        self._settled = not self.auto
        self._http = http_client(timeout, max_body)
        weakref.finalize(self, self._http.close)  # its sockets go with the client
        self._key = api_key or "none"
        # An explicit placeholder key: without one the package would read OPENAI_API_KEY from the
        # environment and send a real OpenAI key to whatever server base_url names.
        self._client = openai.OpenAI(
            base_url=self.url,
            api_key=self._key,
            timeout=timeout,
            max_retries=0,
            http_client=self._http,
        )

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
            models, props = self._probe(self.url + "/models"), self._probe(_root(self.url))
            known.window = known.window or window_of(models, props, self.model)
        return known.window

    def _probe(self, url: str) -> Any:
        try:
            response = self._http.get(
                url,
                headers={"Authorization": f"Bearer {self._key}"},
                timeout=min(self.timeout, PROBE_SECONDS),
            )
            return response.json() if response.status_code == 200 else None
        except (httpx2.HTTPError, openai.OpenAIError, ValueError):
            return None

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
            reply = self._request(messages, max_tokens, schema, mode, step)
        except openai.APIStatusError as exc:
            detail = _detail(exc)
            if schema and self.auto and mode != "prompt" and names_format(exc.status_code, detail):
                ENDPOINTS.step_down(self.url, self.model, mode)
                raise FormatRefused(mode) from None
            window = overflow_window(detail)
            if window is not None:
                raise self._overflow(step, window, max_tokens, detail) from None
            raise LLMError(
                f"LLM endpoint {self.url} refused step {step!r} (HTTP {exc.status_code}: "
                f"{detail}); check TIDELINE_LLM_MODEL and TIDELINE_LLM_API_KEY"
            ) from None
        if schema:
            self._settled = True
        return reply

    def _overflow(self, step: str, window: int, max_tokens: int, detail: str) -> InputTooLong:
        if window:
            self._known.window = window
        size = f"its {window}-token context window" if window else "its context window"
        return InputTooLong(
            f"step {step!r}: LLM endpoint {self.url} says the prompt and the answer's "
            f"max_tokens={max_tokens} do not fit {size} ({detail}); start the server with a "
            "larger context (llama.cpp: --n_ctx) or lower TIDELINE_LLM_MAX_INPUT_TOKENS"
        )

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
        elif schema is not None and mode == "json_object_schema":
            extra["response_format"] = {"type": "json_object", "schema": schema.for_grammar()}
        elif schema is not None:
            sent = with_instruction(messages, schema)
            if mode == "json_object":
                extra["response_format"] = {"type": "json_object"}
        resp = self._create(sent, max_tokens, step, extra)
        try:
            choice = resp.choices[0]
            text = choice.message.content or ""
            if not isinstance(text, str):
                raise TypeError(type(text).__name__)
        except (IndexError, AttributeError, TypeError, KeyError):
            raise LLMError(
                f"LLM endpoint {self.url} answered step {step!r} without a message; is it an "
                "OpenAI-compatible chat completions API?"
            ) from None
        usage = _usage(resp.usage)
        if usage is None:  # some servers omit usage; count what we sent and got, and say so
            est = sum(estimate_tokens(m["content"]) for m in sent)
            usage = Usage(est, estimate_tokens(text), estimated=True)
        model = resp.model if isinstance(resp.model, str) and resp.model else self.model
        return Reply(text, usage, model[:200], mode, choice.finish_reason == "length")

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
            except (openai.APITimeoutError, AnswerTooSlow):
                raise LLMUnavailable(
                    f"LLM endpoint {self.url} did not answer step {step!r} within "
                    f"{self.timeout:g}s; raise TIDELINE_LLM_TIMEOUT or use a faster model"
                ) from None
            except AnswerTooLarge as exc:
                raise LLMError(
                    f"LLM endpoint {self.url} answered step {step!r} with a body over "
                    f"{exc.size:,} bytes (max_tokens was {max_tokens}), which was not read "
                    "further; check that the server honours max_tokens"
                ) from None
            except openai.APIConnectionError as exc:
                last = f"connection failed: {type(exc.__cause__ or exc).__name__}"
                wait = self._backoff(attempt)
            except json.JSONDecodeError as exc:  # the body ended inside the JSON: cut short
                last = f"the answer body was not complete JSON ({exc.msg} at byte {exc.pos})"
                wait = self._backoff(attempt)
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500:
                    raise
                if "response_format" in extra and names_format(exc.status_code, _detail(exc)):
                    raise  # the server lacks this structured-output form: retrying won't help
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


def _root(url: str) -> str:
    """llama.cpp's `/props` sits beside `/v1`, not under it."""
    return (url[: -len("/v1")] if url.endswith("/v1") else url) + "/props"


def _usage(usage: Any) -> Usage | None:
    """The server's token counts, if it sent believable ones."""
    if usage is None:
        return None
    counts = (getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
    if not all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n < _USAGE_MAX for n in counts
    ):
        return None
    return Usage(counts[0] or 0, counts[1] or 0)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (Retry-After or retry-after-ms), if it said."""
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale)
        except (KeyError, ValueError):
            continue
    return None


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return " ".join(str(message).split())[:300]
    return " ".join(exc.message.split())[:300]
