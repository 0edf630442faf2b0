"""The MCP server over streamable HTTP: one real server as a smoke test; the guard (token, Origin,
Host) and the refusals to start run in process against the same ASGI app `serve` runs."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from tests.helpers import wait_until
from tests.mcp.conftest import TOKEN, agent_settings, payload, start_http, stop
from tests.mcp.scenarios import check_handshake, round_trip
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.mcp import http_app

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def _with_client(url: str, scenario: Any) -> Any:
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(60)) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as c,
    ):
        return await scenario(c)


def test_http_round_trip_and_a_call_whose_client_went_away_still_commits(tmp_path: Path) -> None:
    server = start_http(tmp_path)
    try:

        async def scenario(c: Any) -> None:
            await check_handshake(c)
            await round_trip(c)

        anyio.run(_with_client, server.url, scenario)

        with httpx.Client(timeout=30) as http:
            hello = http.post(server.url, json=INITIALIZE, headers=ACCEPT)
            session = {
                **ACCEPT,
                "mcp-session-id": hello.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert http.post(server.url, json=initialized, headers=session).status_code == 202
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "sync_turn",
                    "arguments": {"session": "s", "role": "user", "text": "hi"},
                },
            }
            # Hang up as soon as the response starts, before the result arrives.
            with http.stream("POST", server.url, json=call, headers=session) as response:
                assert response.status_code == 200

        async def turns(c: Any) -> int:
            return int(payload(await c.call_tool("memory_stats", {}))["turns"])

        wait_until(lambda: anyio.run(_with_client, server.url, turns) == 3, timeout=30)
        assert server.proc.poll() is None
        assert "Traceback" not in server.stderr()
    finally:
        stop(server.proc)


@asynccontextmanager
async def _guarded(token: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for the app `serve` would run on 127.0.0.1:8765, in this process."""
    app = Tideline(agent_settings(token=token, embedder="none"))
    guarded = http_app(app)
    try:
        async with (
            guarded.app.router.lifespan_context(guarded.app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=guarded), base_url="http://127.0.0.1:8765"
            ) as http,
        ):
            yield http
    finally:
        app.close()


async def _post(http: httpx.AsyncClient, **headers: str) -> httpx.Response:
    return await http.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **headers})


def test_a_browser_origin_that_is_not_local_is_refused() -> None:
    async def probe() -> None:
        async with _guarded() as http:
            refused = await _post(http, origin="https://evil.example")
            assert refused.status_code == 403 and "Origin" in refused.json()["error"]
            assert (await _post(http, origin="null")).status_code == 403
            assert (await _post(http, origin="http://localhost:8765")).status_code == 200
            assert (await _post(http)).status_code == 200  # not a browser: no Origin

    anyio.run(probe)


def test_every_loopback_origin_and_host_is_accepted() -> None:
    """The docs allow localhost, 127.0.0.0/8 and [::1]; the SDK's own check allowed fewer."""

    async def probe() -> None:
        async with _guarded() as http:
            for origin in ("http://127.0.0.2", "http://127.8.9.10:3000", "http://a.localhost"):
                assert (await _post(http, origin=origin)).status_code == 200, origin
            for host in ("localhost", "localhost:8765", "127.0.0.2"):
                assert (await _post(http, host=host)).status_code == 200, host
            refused = await _post(http, host="evil.example")
            assert refused.status_code == 421 and "Host 'evil.example'" in refused.json()["error"]

    anyio.run(probe)


async def _status(http: httpx.AsyncClient, authorization: str | None) -> int:
    """The status for an Authorization header sent as given (a raw ASGI request: httpx
    refuses to build `Bearer ` with its trailing space)."""
    body = json.dumps(INITIALIZE).encode()
    headers = [(k.encode(), v.encode()) for k, v in ACCEPT.items()] + [(b"host", b"127.0.0.1")]
    if authorization is not None:
        headers.append((b"authorization", authorization.encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8765),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    transport = http._transport
    assert isinstance(transport, httpx.ASGITransport)
    await transport.app(scope, receive, send)
    return int(sent[0]["status"])


def test_token_is_required_on_every_request() -> None:
    async def probe() -> None:
        async with _guarded(TOKEN) as http:
            missing = await _post(http)
            assert missing.status_code == 401 and "Bearer" in missing.headers["www-authenticate"]
            assert (await _post(http, authorization="Bearer wrong")).status_code == 401
            assert (await _post(http, authorization=TOKEN)).status_code == 401  # no scheme
            for empty in ("Bearer", "Bearer ", ""):
                assert await _status(http, empty) == 401, repr(empty)
            assert await _status(http, None) == 401
            assert (await _post(http, authorization=f"Bearer {TOKEN}")).status_code == 200

    anyio.run(probe)


def test_public_address_without_token_refuses_to_start() -> None:
    done = CliRunner().invoke(cli, ["serve", "--transport", "http", "--host", "0.0.0.0"])
    assert done.exit_code == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "TIDELINE_TOKEN" in lines[0] and "0.0.0.0" in lines[0]


def test_blank_token_refuses_to_start() -> None:
    done = CliRunner().invoke(cli, ["serve", "--transport", "http"], env={"TIDELINE_TOKEN": " "})
    assert done.exit_code == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "TIDELINE_TOKEN is blank" in lines[0]


def test_busy_port_is_a_clear_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = CliRunner().invoke(cli, ["serve", "--transport", "http", "--port", str(port)])
    assert done.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
