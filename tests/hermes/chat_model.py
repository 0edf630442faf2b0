"""A scripted model on 127.0.0.1 speaking the OpenAI chat protocol as Hermes Agent calls it:
`stream: true` answers as server-sent events, the `/api/show` and `/v1/models` probes Hermes
sends first, and every request recorded. Each chat request takes the next scripted answer: text,
or a tool call (`Call`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

MODEL = "scripted-model"


@dataclass
class Call:
    """A tool call the model makes."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


class ChatModel:
    def __init__(self) -> None:
        self.script: list[str | Call] = []
        self.chats: list[dict[str, Any]] = []  # every chat request's body, in order
        self.probes: list[str] = []  # the paths of everything else it was asked
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                model.probes.append(self.path)
                if self.path.rstrip("/").endswith("/models"):
                    self.json({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
                else:
                    self.json({"error": {"message": "not found"}}, 404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    model.probes.append(self.path)  # /api/show: a context length, as Ollama
                    self.json({"model_info": {"general.context_length": 131072}})
                    return
                with model.lock:
                    model.chats.append(body)
                    answer = model.script.pop(0) if model.script else "(nothing scripted)"
                if body.get("stream"):
                    self.stream(answer)
                else:
                    self.json(_completion(answer))

            def json(self, data: Any, status: int = 200) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def stream(self, answer: str | Call) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _chunks(answer):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _completion(answer: str | Call) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(answer, Call):
        message["tool_calls"] = [_tool_call(answer)]
        reason = "tool_calls"
    else:
        message["content"], reason = answer, "stop"
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _tool_call(call: Call) -> dict[str, Any]:
    return {
        "id": f"call_{call.name}",
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def _chunks(answer: str | Call) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
        }

    if isinstance(answer, Call):
        yield chunk({"role": "assistant", "tool_calls": [{"index": 0, **_tool_call(answer)}]})
        yield chunk({}, "tool_calls")
    else:
        yield chunk({"role": "assistant", "content": answer})
        yield chunk({}, "stop")
    yield {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
