"""`tideline serve`: the MCP server over stdio (for a client that spawns it), or over HTTP with the
REST API and the web panel beside it on the same port."""

from __future__ import annotations

import sys
from contextlib import suppress
from enum import StrEnum
from typing import Annotated

import typer

from tideline.cli._app import open_app
from tideline.cli._output import err_console

#: What a person who typed `tideline serve` in a terminal sees (an MCP client sees nothing).
WAITING = (
    "Waiting for an MCP client on stdin (a client such as Claude Desktop starts this command "
    "itself); Ctrl-C to stop; for the panel run `tideline serve --transport http`."
)


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def serve(
    transport: Annotated[
        Transport,
        typer.Option(
            "--transport",
            "-t",
            help="stdio: the client spawns this process; http: MCP at --host:--port/mcp, the "
            "REST API at /api and the web panel at /.",
        ),
    ] = Transport.stdio,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="HTTP address. Anything but loopback requires a token (TIDELINE_TOKEN or "
            "TIDELINE_TOKENS_FILE).",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", help="HTTP port.")] = 8765,
) -> None:
    """Serve this agent's memory: MCP over stdio, or over HTTP with the REST API and the panel.
    With a token (TIDELINE_TOKEN or `token` in config.toml), HTTP clients must send
    'Authorization: Bearer <token>'; the panel asks for it once. With TIDELINE_TOKENS_FILE one
    HTTP server answers for several agents: each token opens its own namespace."""
    # Imported here so other commands start without loading the MCP SDK or the web framework.
    with open_app() as app, suppress(KeyboardInterrupt):
        if not app.settings.tokens_file and not app.settings.database_url:
            # a long-lived process keeps the search files of large indexes up to date itself
            app.memory.build_search_files(background=True)
        if transport is Transport.stdio:
            from tideline.mcp import serve_stdio

            if sys.stdin.isatty():  # typed in a terminal, where silence looks like a hang
                err_console.print(WAITING, highlight=False, soft_wrap=True)
            serve_stdio(app)
        else:
            from tideline.mcp import MCP_ENDPOINT
            from tideline.web import serve as serve_http

            serve_http(app, host=host, port=port, endpoints=(MCP_ENDPOINT,))


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
