"""`tideline serve --transport http` as a real process: the API, the panel and the MCP endpoint
answer on one port, over the same memory."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import wait_until
from tests.mcp.conftest import free_port, payload, server_env, start_http, stop


def test_one_port_serves_the_api_the_panel_and_mcp(tmp_path: Path) -> None:
    server = start_http(tmp_path)
    base = f"http://127.0.0.1:{server.port}"
    try:
        with httpx.Client(base_url=base, timeout=30) as http:
            turn = http.post(
                "/api/turns",
                json={"session": "s", "role": "user", "text": "The boat is called Heron"},
            )
            assert turn.status_code == 200, turn.text
            note = http.post(
                "/api/narratives",
                json={"gesture": "The boat is called Heron", "source_links": [turn.json()["id"]]},
            )
            assert note.status_code == 201, note.text
            hits = http.get("/api/search", params={"query": "Heron boat"}).json()["hits"]
            assert hits and hits[0]["id"] == note.json()["id"]
            panel = http.get("/", params={"q": "Heron"})
            assert panel.status_code == 200 and "The boat is called Heron" in panel.text
            assert http.get("/static/panel.js").status_code == 200
            assert http.get("/api/openapi.json").json()["info"]["title"].startswith("Tideline")

        async def stats(c: Any) -> dict[str, Any]:
            return dict(payload(await c.call_tool("memory_stats", {})))

        async def over_mcp() -> dict[str, Any]:
            async with (
                httpx2.AsyncClient(timeout=httpx2.Timeout(60)) as http2,
                Client(streamable_http_client(server.url, http_client=http2)) as c,
            ):
                return await stats(c)

        counted = anyio.run(over_mcp)
        assert (counted["turns"], counted["narratives"]) == (1, 1)  # the memory the API wrote
        assert "Traceback" not in server.stderr()
    finally:
        stop(server.proc)


def test_make_run_says_where_the_panel_mcp_and_api_are(tmp_path: Path) -> None:
    """`make run` (the README's first command) prints the three URLs, not a log line. Whatever
    make prints first (a setup after pyproject.toml changed: pip's notices and warnings) is not
    the server's to word, so the announcement is looked for after it; the wait ends as soon as
    the server answers, so a server that says nothing fails at once, not at the deadline."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = server_env(tmp_path, TIDELINE_EMBEDDER="none")
    proc = subprocess.Popen(
        ["make", "-s", "run", f"PORT={port}"],
        cwd=Path(__file__).parents[2],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # make and the server it starts: one group, stopped together
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)

        def read() -> None:
            chunk = proc.stdout.read() if proc.stdout else None
            lines.extend((chunk or b"").decode(errors="replace").splitlines())

        def said_or_answering() -> bool:
            read()
            if any(line.startswith("Stop it with Ctrl-C") for line in lines):
                return True
            if proc.poll() is not None:
                raise AssertionError(f"make run exited {proc.returncode}: {lines}")
            try:
                return httpx.get(f"{base}/api", timeout=2).status_code > 0
            except httpx.TransportError:
                return False

        wait_until(said_or_answering, timeout=240, interval=0.2)  # a setup may come first
        read()  # the announcement is printed before the port is served: all of it is here now
        starts = [n for n, line in enumerate(lines) if line.startswith("Tideline is serving")]
        assert starts, f"make run never said where it serves: {lines}"
        block = lines[starts[0] :]
        assert block[0] == f"Tideline is serving hui's memory on {base}", lines
        shown = {line.split()[0]: line.split()[-1] for line in block[1:] if line.startswith("  ")}
        assert shown["panel"] == f"{base}/" and shown["MCP"] == f"{base}/mcp"
        assert any(line.split()[:2] == ["REST", "API"] and line.endswith(f"{base}/api") for line in block)  # fmt: skip
        assert any(line.startswith("Stop it with Ctrl-C") for line in block), lines
        with httpx.Client(timeout=30) as http:  # and each answers there
            for url in (f"{base}/", f"{base}/api", f"{base}/api/docs"):
                assert http.get(url).status_code == 200, url
        assert not any("session manager" in line for line in lines), lines
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
