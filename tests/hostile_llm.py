"""A chat completions endpoint on 127.0.0.1 that answers with hostile bodies at the HTTP level.

`tests/llm_server.py` scripts what a model says; this one misbehaves below that, where a
well-formed completion cannot: a body far larger than any answer, one cut short in the middle of
its JSON, a connection dropped before the promised length, an answer that never ends. Each
`kind` answers every request the same way; `served` counts them. Used by the tests of the
client's bounds and by `bench/faults.py` (the hostile-LLM-answer rows).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from socketserver import BaseRequestHandler, ThreadingTCPServer
from typing import Any, Literal, Self

Kind = Literal["body_50mb", "truncated_json", "cut_connection", "endless"]
KINDS: tuple[Kind, ...] = ("body_50mb", "truncated_json", "cut_connection", "endless")
_MB = 1024 * 1024


def completion(content: str, model: str = "hostile") -> bytes:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }
    return json.dumps(body).encode()


class HostileServer:
    def __init__(self, kind: Kind, content: str = '{"facts": []}') -> None:
        self.kind, self.content = kind, content
        self.served = 0
        self.closing = threading.Event()
        outer = self

        class Handler(BaseRequestHandler):
            def handle(self) -> None:
                outer.serve(self.request)

        self.server = ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def serve(self, sock: socket.socket) -> None:
        reader = sock.makefile("rb")
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            line = reader.readline(65536)
            if not line:
                return
            head += line
        length = next(
            (
                int(h.split(b":")[1])
                for h in head.split(b"\r\n")
                if h.lower().startswith(b"content-length")
            ),
            0,
        )
        reader.read(length)
        if not head.startswith(b"POST"):
            sock.sendall(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            return
        self.served += 1
        with contextlib.suppress(OSError):  # the client gave up reading: what a bound is for
            self.answer(sock)

    def answer(self, sock: socket.socket) -> None:
        def head(extra: str) -> bytes:
            return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}\r\n".encode()

        if self.kind == "body_50mb":
            filler = b'{"choices": [{"message": {"content": "' + b"x" * _MB
            sock.sendall(head(f"Content-Length: {50 * _MB}\r\nConnection: close\r\n"))
            sent = 0
            while sent < 50 * _MB and not self.closing.is_set():
                chunk = filler if sent == 0 else b"x" * _MB
                sock.sendall(chunk[: 50 * _MB - sent])
                sent += len(chunk)
        elif self.kind == "truncated_json":
            body = completion(self.content)[:60]
            sock.sendall(head(f"Content-Length: {len(body)}\r\nConnection: close\r\n") + body)
        elif self.kind == "cut_connection":
            body = completion(self.content)
            sock.sendall(head(f"Content-Length: {len(body)}\r\nConnection: close\r\n"))
            sock.sendall(body[: len(body) // 2])
        else:  # endless: a chunked body, one byte every 20 ms, until someone hangs up
            sock.sendall(head("Transfer-Encoding: chunked\r\n") + b"1\r\n{\r\n")
            while not self.closing.wait(0.02):
                sock.sendall(b"1\r\n \r\n")
        sock.shutdown(socket.SHUT_WR)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
