"""The one stdio smoke test: spawned the way Claude Desktop does, `python -m tideline serve`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers import wait_until
from tests.mcp.conftest import serve_command, server_env, stop
from tests.mcp.scenarios import check_handshake, round_trip
from tideline.cli.serve import WAITING


def test_stdio_round_trip(tmp_path: Path) -> None:
    command, *args = serve_command("--transport", "stdio")
    params = StdioServerParameters(command=command, args=args, env=server_env(tmp_path))
    log = tmp_path / "stderr.log"

    async def session() -> None:
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                await check_handshake(c)
                await round_trip(c)

    anyio.run(session)
    assert "Traceback" not in log.read_text()
    assert WAITING not in log.read_text()  # a client's stdin is a pipe: nothing said to it


def test_serve_typed_in_a_terminal_says_it_waits_for_a_client(tmp_path: Path) -> None:
    """On a TTY, silence looks like a hang: one stderr line says what it waits for, how to stop
    and how to get the panel; stdout (the MCP channel) stays empty."""
    controller, terminal = os.openpty()
    proc = subprocess.Popen(
        serve_command(),
        env=server_env(tmp_path, TIDELINE_EMBEDDER="none"),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(terminal)
    stream = proc.stderr
    assert stream is not None
    os.set_blocking(stream.fileno(), False)
    err = b""

    def a_line() -> bool:
        nonlocal err
        err += stream.read() or b""
        return b"\n" in err or proc.poll() is not None

    try:
        wait_until(a_line, timeout=60)
        said = err.decode()
        assert said == WAITING + "\n"
        assert "Ctrl-C" in said and "--transport http" in said
    finally:
        stop(proc)
        os.close(controller)
    assert proc.stdout is not None and proc.stdout.read() == b""
    proc.stdout.close()
    stream.close()
