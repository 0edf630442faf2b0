"""The MCP server over streamable HTTP: the protocol, the token, the Origin check, the refusals."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers import wait_until
from tests.mcp.conftest import (
    TOKEN,
    HttpServer,
    free_port,
    payload,
    serve_command,
    server_env,
    start_http,
    stop,
)
from tests.mcp.scenarios import bad_calls, check_handshake, check_tools, round_trip

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


def _post(server: HttpServer, **headers: str) -> httpx.Response:
    return httpx.post(server.url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)


async def _with_client(url: str, scenario: Any, token: str | None = None) -> Any:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as c,
    ):
        return await scenario(c)


def test_http_protocol_round_trip_and_errors(http_server: HttpServer) -> None:
    async def scenario(c: Any) -> None:
        await check_handshake(c)
        await check_tools(c)
        await round_trip(c)
        await bad_calls(c)

    anyio.run(_with_client, http_server.url, scenario)
    assert http_server.proc.poll() is None


def test_a_browser_origin_that_is_not_local_is_refused(http_server: HttpServer) -> None:
    refused = _post(http_server, origin="https://evil.example")
    assert refused.status_code == 403 and "Origin" in refused.json()["error"]
    assert _post(http_server, origin="null").status_code == 403
    assert _post(http_server, origin=f"http://localhost:{http_server.port}").status_code == 200
    assert _post(http_server).status_code == 200  # not a browser: no Origin


def test_every_loopback_origin_and_host_is_accepted(http_server: HttpServer) -> None:
    """The docs allow localhost, 127.0.0.0/8 and [::1]; the SDK's own check allowed fewer."""
    for origin in ("http://127.0.0.2", "http://127.8.9.10:3000", "http://a.localhost"):
        assert _post(http_server, origin=origin).status_code == 200, origin
    for host in ("localhost", f"localhost:{http_server.port}", "127.0.0.2"):
        assert _post(http_server, host=host).status_code == 200, host
    refused = _post(http_server, host="evil.example")
    assert refused.status_code == 421 and "Host 'evil.example'" in refused.json()["error"]


def _raw_post(server: HttpServer, *header_lines: str) -> bytes:
    """The status line for a request sent byte for byte: httpx refuses to send `Bearer ` at all."""
    body = json.dumps(INITIALIZE).encode()
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{server.port}",
        *(f"{k}: {v}" for k, v in ACCEPT.items()),
        f"Content-Length: {len(body)}",
        *header_lines,
    ]
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall("\r\n".join(head).encode() + b"\r\n\r\n" + body)
        return sock.recv(4096).split(b"\r\n", 1)[0]


def test_token_is_required_on_every_request(token_server: HttpServer) -> None:
    missing = _post(token_server)
    assert missing.status_code == 401 and "Bearer" in missing.headers["www-authenticate"]
    assert _post(token_server, authorization="Bearer wrong").status_code == 401
    assert _post(token_server, authorization=TOKEN).status_code == 401  # scheme missing
    for empty in ("Authorization: Bearer", "Authorization: Bearer ", "Authorization:"):
        assert _raw_post(token_server, empty).endswith(b" 401 Unauthorized"), empty
    assert _post(token_server, authorization=f"Bearer {TOKEN}").status_code == 200

    async def scenario(c: Any) -> dict[str, Any]:
        return payload(await c.call_tool("memory_stats", {}))

    stats = anyio.run(_with_client, token_server.url, scenario, TOKEN)
    assert stats["turns"] == 0


def test_public_address_without_token_refuses_to_start(tmp_path: Path) -> None:
    done = subprocess.run(
        serve_command("--transport", "http", "--host", "0.0.0.0", "--port", str(free_port())),
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "TIDELINE_TOKEN" in lines[0] and "0.0.0.0" in lines[0]


def test_busy_port_is_a_clear_error(tmp_path: Path, http_server: HttpServer) -> None:
    done = subprocess.run(
        serve_command("--transport", "http", "--port", str(http_server.port)),
        env=server_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{http_server.port}" in done.stderr


def test_a_call_whose_client_went_away_still_commits(tmp_path: Path) -> None:
    server = start_http(tmp_path)
    try:
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

        wait_until(lambda: anyio.run(_with_client, server.url, turns) == 1, timeout=30)
        assert server.proc.poll() is None
    finally:
        stop(server.proc)
