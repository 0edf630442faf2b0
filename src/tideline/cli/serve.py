"""`tideline serve`: the MCP server over stdio (for a client that spawns it) or streamable HTTP."""

from __future__ import annotations

import os
from enum import StrEnum
from typing import Annotated

import typer

from tideline.cli._output import errors_to_exit
from tideline.config import Settings


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
    """Serve this agent's memory over MCP. With TIDELINE_TOKEN set, HTTP clients must send
    'Authorization: Bearer <token>'."""
    # Imported here so other commands start without loading the MCP SDK.
    from tideline.app import Tideline
    from tideline.mcp import check_bind
    from tideline.mcp import serve as run_server

    token = os.environ.get("TIDELINE_TOKEN") or None
    with errors_to_exit():
        if transport is Transport.http:
            check_bind(host, token)
        app = Tideline(Settings.load())
        try:
            run_server(app, transport.value, host=host, port=port, token=token)
        except KeyboardInterrupt:
            pass
        finally:
            close = getattr(app, "close", None)
            if close is not None:
                close()
