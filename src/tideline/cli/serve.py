"""`tideline serve`: the MCP server over stdio (for a client that spawns it) or streamable HTTP."""

from __future__ import annotations

from contextlib import suppress
from enum import StrEnum
from typing import Annotated

import typer

from tideline.cli._app import open_app


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def serve(
    transport: Annotated[
        Transport,
        typer.Option(
            "--transport",
            "-t",
            help="stdio: the client spawns this process; http: streamable HTTP on "
            "--host:--port/mcp.",
        ),
    ] = Transport.stdio,
    host: Annotated[
        str,
        typer.Option("--host", help="HTTP address. Anything but loopback requires TIDELINE_TOKEN."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", help="HTTP port.")] = 8765,
) -> None:
    """Serve this agent's memory over MCP. With a token (TIDELINE_TOKEN or `token` in
    config.toml), HTTP clients must send 'Authorization: Bearer <token>'."""
    # Imported here so other commands start without loading the MCP SDK.
    from tideline.mcp import serve as run_server

    with open_app() as app, suppress(KeyboardInterrupt):
        run_server(app, transport.value, host=host, port=port)
