"""Servers for the MCP tests, all driven by the SDK's real client.

Most tests talk to `build_server(app)` in memory (the SDK's in-memory transport: the same
server, schemas and worker threads, no process to start). One stdio and one HTTP smoke test
start `python -m tideline serve` as a subprocess.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.helpers import wait_until
from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import Embedder
from tideline.mcp import build_server

AGENT = "hui"
TOKEN = "s3cret-test-token"


def agent_settings(**overrides: Any) -> Settings:
    """The test agent's settings (home and cache from the autouse fixture's environment)."""
    return Settings.load(overrides={"agent_name": AGENT, **overrides})


@pytest.fixture
def agent(e5: Embedder) -> Iterator[Tideline]:
    """The agent AGENT in a temporary home, with the real bundled embedder."""
    app = Tideline(agent_settings(), embedder=e5)
    yield app
    app.close()


def in_memory(app: Tideline) -> Client:
    """The SDK's client connected in memory to the full server of `app`."""
    return Client(build_server(app), read_timeout_seconds=120)


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a server process: its own home and cache, one OpenMP thread, and the
    test's database (a PostgreSQL namespace in tests marked `engines`)."""
    keep = ("TIDELINE_DATABASE_URL", "TIDELINE_DATABASE_USER")
    env = {
        k: v for k, v in os.environ.items() if k in keep or not k.startswith(("TIDELINE_", "MEMO_"))
    }
    env.update(
        AGENT_NAME=AGENT,
        TIDELINE_HOME=str(tmp_path / "home"),
        TIDELINE_EMBED_CACHE=str(tmp_path / "embed-cache.db"),
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tideline", "serve", *args]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def payload(result: Any) -> Any:
    """The JSON a tool returned (structured content, else the first text block)."""
    assert not result.is_error, result.content[0].text
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    """The message of a tool error, which must be one line."""
    assert result.is_error, result
    text = result.content[0].text
    assert "\n" not in text, text
    return text


@dataclass
class HttpServer:
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")


def start_http(
    tmp_path: Path, token: str | None = None, *, ready_within: float = 30, **env: str
) -> HttpServer:
    """Start `tideline serve --transport http` on a free port (`env`: more variables); return
    once it accepts connections (within `ready_within` seconds)."""
    port = free_port()
    log = tmp_path / f"server-{port}.log"
    extra = ({"TIDELINE_TOKEN": token} if token else {}) | env
    with log.open("wb") as err:
        proc = subprocess.Popen(
            serve_command("--transport", "http", "--port", str(port)),
            env=server_env(tmp_path, **extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )

    def ready() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"server exited {proc.returncode}: {log.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            return False

    wait_until(ready, timeout=ready_within, interval=0.05)
    return HttpServer(f"http://127.0.0.1:{port}/mcp", port, proc, log)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server without a token for the whole module."""
    server = start_http(tmp_path_factory.mktemp("http"))
    yield server
    stop(server.proc)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server that requires TOKEN."""
    server = start_http(tmp_path_factory.mktemp("token"), token=TOKEN)
    yield server
    stop(server.proc)
