"""A small real HTTP server on 127.0.0.1 speaking the OpenAI embeddings protocol.

It stands in for a hosted embedding service (which cannot run here). Vectors are derived from a
hash of the text, so they are deterministic; the server records every request it served and can be
told to fail the next N requests with a status code (and `fail_headers`, e.g. Retry-After).
Subclasses add endpoints through `routes()` (tests/llm_server.py adds chat completions).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import numpy as np

Reply = tuple[int, Any, dict[str, str]]  # status, JSON body (or raw bytes), extra headers
Route = Callable[[dict[str, Any], Mapping[str, str]], Reply]


def fake_vector(text: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32).tolist()


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return status, {"error": {"message": message}}, headers or {}


#: What a path nothing serves answers: a web server's HTML page, as most servers send.
NOT_FOUND: Reply = (
    404,
    b"<!DOCTYPE html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>"
    b"<p>The requested URL was not found on this server.</p></body></html>",
    {"Content-Type": "text/html"},
)


#: Ports this process's stubs have listened on (`_fresh_server`).
_USED_PORTS: set[int] = set()


def _fresh_server(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on a port no earlier stub of this process had: what a client learns of a URL
    (`tideline.llm._endpoint`: a window, a structured-output rung) is kept for the process, and
    a later stub on a reused port inherited it (a window test once read the earlier stub's
    "no window" and failed)."""
    taken: list[ThreadingHTTPServer] = []
    while True:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        if server.server_address[1] not in _USED_PORTS:
            break
        taken.append(server)  # held open so that the next bind gets another port
    for old in taken:
        old.server_close()
    _USED_PORTS.add(server.server_address[1])
    return server


class OpenAIStub:
    def __init__(self, dim: int = 16, api_key: str | None = None):
        self.dim = dim
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.gets: list[str] = []  # paths of GET requests (a client asking the server about itself)
        self.fail_next: list[int] = []
        self.fail_headers: dict[str, str] = {}
        self.closing = threading.Event()  # set on exit: wakes handlers told to answer slowly
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                stub.gets.append(self.path)
                route = stub.get_routes().get(self.path)
                self.answer(*(route() if route else error(404, "not found")))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(
                    {
                        "path": self.path,
                        "body": body,
                        "auth": self.headers.get("Authorization"),
                        "headers": self.headers,  # case-insensitive lookups
                    }
                )
                self.answer(*stub.respond(self.path, body, self.headers))

            def answer(self, status: int, payload: Any, headers: dict[str, str]) -> None:
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

        self.server = _fresh_server(Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def routes(self) -> dict[str, Route]:
        return {"/v1/embeddings": self.embeddings}

    def get_routes(self) -> dict[str, Callable[[], Reply]]:
        return {}

    def respond(self, path: str, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
        if self.fail_next:
            return error(self.fail_next.pop(0), "scripted failure", self.fail_headers)
        if self.api_key and headers.get("Authorization") != f"Bearer {self.api_key}":
            return error(401, "bad key")
        route = self.routes().get(path)
        return route(body, headers) if route else NOT_FOUND

    def embeddings(self, body: dict[str, Any], headers: Mapping[str, str]) -> Reply:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t, self.dim)}
            for i, t in enumerate(inputs)
        ]
        return 200, {"object": "list", "data": data[::-1], "model": body["model"]}, {}

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
