"""A small real HTTP server on 127.0.0.1 speaking the OpenAI embeddings protocol.

It stands in for a hosted embedding service (which cannot run here). Vectors are derived from a
hash of the text, so they are deterministic; the server records every request it served and can be
told to fail the next N requests with a status code.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def fake_vector(text: str, dim: int) -> list[float]:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).astype(np.float32).tolist()


class OpenAIStub:
    def __init__(self, dim: int = 16, api_key: str | None = None):
        self.dim = dim
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.fail_next: list[int] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(
                    {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
                )
                if stub.fail_next:
                    return self._send(
                        stub.fail_next.pop(0), {"error": {"message": "scripted failure"}}
                    )
                if stub.api_key and self.headers.get("Authorization") != f"Bearer {stub.api_key}":
                    return self._send(401, {"error": {"message": "bad key"}})
                if self.path != "/v1/embeddings":
                    return self._send(404, {"error": {"message": "not found"}})
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {"object": "embedding", "index": i, "embedding": fake_vector(t, stub.dim)}
                    for i, t in enumerate(inputs)
                ]
                self._send(200, {"object": "list", "data": data[::-1], "model": body["model"]})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
