"""Request bodies are capped by route before anything reads them (413, one line), on the real
server: a 300 MB narrative declared by Content-Length is refused unread, and one sent chunked
(no Content-Length) is refused once the cap is passed — the server reads and keeps a few MB at
most, not 300. The MCP endpoint and the panel's forms too; the largest valid bodies still pass."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.mcp.conftest import HttpServer, start_http, stop
from tideline.mcp import MCP_BODY_LIMIT
from tideline.web._routes import FORM, JSON, ROUTES

HUGE = 300 * 1024 * 1024
CHUNK = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tmp = tmp_path_factory.mktemp("limits")
    (tmp / "notes" / "work").mkdir(parents=True)
    (tmp / "notes" / "work" / "_meta.yaml").write_text("name: work\ndescription: notes\n")
    started = start_http(tmp, TIDELINE_EMBEDDER="none", MEMO_ROOT=str(tmp / "notes"))
    yield started
    stop(started.proc)


def rss_mb(server: HttpServer) -> float:
    status = Path(f"/proc/{server.proc.pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]) / 1024  # fmt: skip


def response_of(sock: socket.socket) -> tuple[int, dict[str, str]]:
    """The status and JSON body of the answer on `sock` (the server closes after a 413)."""
    data = b""
    sock.settimeout(10)
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        part = sock.recv(65536)
        if not part:
            break
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def post_raw(server: HttpServer, path: str, headers: str, chunked: bool) -> tuple[int, dict[str, str], int]:  # fmt: skip
    """POST to `path`: with chunked, send 300 MB in chunks until the server answers; else only
    the headers (which declare 300 MB). The status, the JSON answer, the bytes sent."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    with sock:
        length = "transfer-encoding: chunked" if chunked else f"content-length: {HUGE}"
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\n"
            f"content-type: application/json\r\n{headers}{length}\r\n\r\n".encode()
        )
        sent = 0
        chunk = f"{CHUNK:x}\r\n".encode() + b"[" * CHUNK + b"\r\n"
        while chunked and sent < HUGE:
            if select.select([sock], [], [], 0)[0]:
                break  # the answer came
            try:
                sock.sendall(chunk)
            except OSError:  # the server closed on us; its answer is in the buffer
                break
            sent += CHUNK
        status, answer = response_of(sock)
        return status, answer, sent


@pytest.mark.parametrize(
    ("path", "headers", "cap"),
    [
        ("/api/narratives", "", JSON),
        ("/api/library/notes", "", ROUTES["/api/library/notes"]),
        ("/mcp", "accept: application/json, text/event-stream\r\n", MCP_BODY_LIMIT),
        ("/login", "", FORM),
    ],
)
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_over_its_cap_is_refused_unread(
    server: HttpServer, path: str, headers: str, cap: int, chunked: bool
) -> None:
    before = rss_mb(server)
    start = time.monotonic()
    status, answer, sent = post_raw(server, path, headers, chunked)
    took = time.monotonic() - start
    assert status == 413, answer
    assert "\n" not in answer["error"] and f"the most POST {path} takes" in answer["error"]
    assert sent <= cap + 16 * 1024 * 1024  # the cap and what the sockets' buffers took, not 300 MB
    assert took < 10
    assert rss_mb(server) - before < 3 * cap / 1024 / 1024 + 32, (before, rss_mb(server))
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}") as http:  # still serving
        assert http.get("/api/stats").status_code == 200


def test_the_largest_valid_bodies_pass(server: HttpServer) -> None:
    """A turn of 100,000 emoji, each spelled as a JSON surrogate pair (12 bytes), and a note of
    ~2 MB spelled as `\u00e9` (a 5.7 MB body) are under their routes' caps."""
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=120) as http:
        turn = json.dumps({"session": "s", "role": "user", "text": "😀" * 100_000})  # ASCII only
        done = http.post("/api/turns", content=turn, headers={"content-type": "application/json"})
        assert done.status_code == 200, done.text[:300]
        note = json.dumps({"path": "work/big.md", "text": "# Big\n" + ("é" * 1000 + "\n") * 950})
        done = http.post("/api/library/notes", content=note, headers={"content-type": "application/json"})  # fmt: skip
        assert done.status_code == 201, done.text[:300]
        small = http.post("/api/narratives", json={"gesture": "x" * 501})  # the field's own limit
        assert small.status_code in (400, 422) and "500" in small.text
