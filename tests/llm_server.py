"""A real OpenAI-protocol chat server on 127.0.0.1 that replays scripted answers.

No usable LLM runs here, so tests script the model: `script(answer, ..., step="extract")` queues
answers for requests whose `X-Tideline-Step` header names that step; `script(answer)` without a
step is a FIFO used when the step has no queue of its own. Every request is recorded (`chats`).
Failure modes, each a plain attribute or call:

- down: do not enter the context manager (or use `closed_url()`): connection refused;
- `fail_next = [429, 429]` with `fail_headers = {"Retry-After": "0"}`, or `[500, 503]`;
- malformed or schema-invalid JSON: script that text as the answer;
- `reject_json_schema` / `reject_object_schema` (json_object with a `schema`) /
  `reject_json_object`: refuse that response_format with `format_status` (400; llama-cpp-python
  answers json_schema with a 500);
- `n_ctx`: answer a prompt (in words) over it with llama-cpp-python's overflow error, and
  `tell_window` to say it at `GET /props` as llama.cpp's llama-server does;
- a hostile body: `Answer(raw=b"...")` is sent as the body as it is;
- `delay`: answer after this many seconds (woken early when the server closes); per answer:
  `Answer(..., delay=1.5)`.

Pipelines call many steps: `default(step, answer)` answers a step whose queue is empty (so a
rerun gets the same answers), `follow(step, f)` answers it from what the request shows,
`asked` lists the step of every request, `left()` what is unused.
"""

from __future__ import annotations

import json
import socket
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from tests.openai_stub import OpenAIStub, Reply, Route, error
from tideline.llm import STEP_HEADER


@dataclass(frozen=True)
class Answer:
    """One scripted model answer; token counts default to a word count of request and answer."""

    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    delay: float = 0.0
    raw: bytes | None = None  # sent instead of a completion (a cut or absurd body)


def closed_url() -> str:
    """The /v1 URL of a port nothing listens on: connection refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class LLMServer(OpenAIStub):
    def __init__(self, model: str = "scripted-model", api_key: str | None = None):
        super().__init__(api_key=api_key)
        self.model = model
        self.queues: dict[str, deque[Answer]] = defaultdict(deque)
        self.reject_json_schema = False
        self.reject_object_schema = False
        self.reject_json_object = False
        self.format_status = 400
        self.n_ctx: int | None = None
        self.tell_window = False
        self.delay = 0.0
        self.defaults: dict[str, Answer] = {}
        self.only_its_model = False  # True: another model name is a 404, as OpenAI answers
        self.responders: dict[str, Callable[[str], Any]] = {}

    def follow(self, step: str, answer: Callable[[str], Any]) -> None:
        """Answer `step`, whenever its queue is empty, from the request's user message (a model
        whose answers follow what it is shown); a dict or model is sent as its JSON."""
        self.responders[step] = answer

    def script(self, *answers: str | Answer | BaseModel | dict[str, Any], step: str = "") -> None:
        """Queue answers for `step` (or the FIFO); models and dicts are sent as their JSON."""
        for a in answers:
            if isinstance(a, BaseModel):
                a = a.model_dump_json()
            elif isinstance(a, dict):
                a = json.dumps(a)
            self.queues[step].append(a if isinstance(a, Answer) else Answer(a))

    def default(self, step: str, answer: str | Answer | BaseModel | dict[str, Any]) -> None:
        """The answer for `step` whenever its queue (and the FIFO) is empty."""
        self.script(answer, step="\x00default")
        self.defaults[step] = self.queues.pop("\x00default")[0]

    @property
    def asked(self) -> list[str]:
        """The step header of every chat request, in order."""
        return [
            r["headers"].get(STEP_HEADER, "")
            for r in self.requests
            if r["path"] == "/v1/chat/completions"
        ]

    def left(self) -> dict[str, int]:
        """Scripted answers not used yet, by step."""
        return {step: len(q) for step, q in self.queues.items() if q}

    @property
    def chats(self) -> list[dict[str, Any]]:
        """The bodies of every chat request received, failed ones included."""
        return [r["body"] for r in self.requests if r["path"] == "/v1/chat/completions"]

    def routes(self) -> dict[str, Route]:
        return {**super().routes(), "/v1/chat/completions": self.chat}

    def get_routes(self) -> dict[str, Callable[[], Reply]]:
        models = {"object": "list", "data": [{"id": self.model, "object": "model"}]}
        routes: dict[str, Callable[[], Reply]] = {"/v1/models": lambda: (200, models, {})}
        if self.tell_window and self.n_ctx:
            props = {"default_generation_settings": {"n_ctx": self.n_ctx}}
            routes["/props"] = lambda: (200, props, {})
        return routes

    def refused(self, body: dict[str, Any]) -> Reply | None:
        form = body.get("response_format") or {}
        kind = form.get("type")
        if kind == "json_object" and "schema" in form:
            kind = "json_object with a schema" if self.reject_object_schema else None
        if (
            (kind == "json_schema" and self.reject_json_schema)
            or (kind == "json_object" and self.reject_json_object)
            or kind == "json_object with a schema"
        ):
            message = f"response_format type {kind!r} is not supported by this server"
            return error(self.format_status, message)
        words = sum(len(m["content"].split()) for m in body["messages"])
        if self.n_ctx and words > self.n_ctx:  # llama-cpp-python's words, a prompt over n_ctx
            asked = words + body.get("max_tokens", 0)
            return error(
                400,
                f"This model's maximum context length is {self.n_ctx} tokens. However, you "
                f"requested {asked} tokens ({words} in the messages, {asked - words} in the "
                "completion). Please reduce the length of the messages or completion.",
            )
        return None

    def chat(self, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
        if self.only_its_model and body.get("model") != self.model:  # as OpenAI answers
            return error(404, f"The model `{body.get('model')}` does not exist")
        refused = self.refused(body)
        if refused is not None:
            return refused
        step = headers.get(STEP_HEADER, "")
        queue = self.queues[step] if self.queues.get(step) else self.queues[""]
        if not queue and step in self.responders:
            said = self.responders[step](body["messages"][-1]["content"])
            queue.append(Answer(said if isinstance(said, str) else json.dumps(said)))
        if not queue and step not in self.defaults:
            return error(400, f"the script has no answer left for step {step!r}")
        answer = queue.popleft() if queue else self.defaults[step]
        if answer.delay or self.delay:
            self.closing.wait(answer.delay or self.delay)
        if answer.raw is not None:
            return 200, answer.raw, {}
        prompt = sum(len(m["content"].split()) for m in body["messages"])
        usage = {
            "prompt_tokens": answer.prompt_tokens if answer.prompt_tokens is not None else prompt,
            "completion_tokens": (
                answer.completion_tokens
                if answer.completion_tokens is not None
                else len(answer.content.split())
            ),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        completion = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer.content},
                    "finish_reason": answer.finish_reason,
                }
            ],
            "usage": usage,
        }
        return 200, completion, {}


def point_cli_at(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMServer:
    """The settings a CLI run reads (env vars) name the scripted server; no embedder."""
    for name, value in {
        "TIDELINE_EMBEDDER": "none",
        "TIDELINE_LLM_BASE_URL": server.url,
        "TIDELINE_LLM_MODEL": "scripted-model",
        "TIDELINE_LLM_BACKOFF": "0.001",
    }.items():
        monkeypatch.setenv(name, value)
    return server
