"""The MCP server: one `MCPServer` with every Tideline tool, served over stdio or streamable HTTP.

The server only maps. Arguments arrive as JSON, are checked against each tool's schema (after
renaming the synonyms models like to use, `limit` for `k`), and go to the core API; core errors
(`TidelineError`) and schema violations come back as tool errors (`isError`) with a one-line
message that says what to call next. A crash is logged with its traceback and returned as a tool
error too, so one bad call never takes the server down.
"""

from __future__ import annotations

import logging

import anyio
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from tideline import __version__
from tideline.app import Tideline
from tideline.library import MAX_FILE_BYTES
from tideline.mcp import (
    analysis_tools,
    dream_tools,
    inject_tools,
    library_tools,
    memory_tools,
    profile_tools,
)
from tideline.mcp._tool_server import ToolServer
from tideline.serve import (
    DEFAULT_HOST,
    KIB,
    Endpoint,
    HttpGuard,
    Throttle,
    is_loopback,
    server_tokens,
    start_exit_sleep,
)

log = logging.getLogger("tideline.mcp")

MCP_PATH = "/mcp"
#: The largest JSON-RPC message a client may send: the largest tool argument is a note for
#: `memo_write` (MAX_FILE_BYTES), and JSON may spell one byte of it as six (`\u0001`).
MCP_BODY_LIMIT = 6 * MAX_FILE_BYTES + 64 * KIB


def build_server(app: Tideline, *, remote: bool = False) -> ToolServer:
    """All tools on one server: memory, script layer, injection, the library, the profile and
    dreaming (with the dream prompts). `remote` (MCP over HTTP): errors hide the server's paths."""
    agent = app.settings.agent_name
    server = ToolServer(
        app,
        remote=remote,
        name="tideline",
        version=__version__,  # serverInfo.version in the initialize result
        title=f"Tideline — {agent}'s memory",
        instructions=(
            f"This server is {agent}'s long-term memory. Call memory_search before answering "
            "anything about the past or the user; call sync_turn for every conversation turn so "
            "the raw context is kept; call memory_write when something is worth remembering; "
            "call memory_trace to read the conversation behind a memory."
        ),
        log_level="INFO",
    )
    for tools in (
        memory_tools,
        analysis_tools,
        inject_tools,
        library_tools,
        profile_tools,
        dream_tools,
    ):
        tools.register(server)
    return server


def mcp_app(app: Tideline, host: str = DEFAULT_HOST) -> Starlette:
    """The MCP endpoint at /mcp with its session manager's lifespan, unguarded: `http_app` puts
    the guard in front (and refuses a public `host` without a token), and `tideline.web` mounts
    its routes beside the REST API and the panel."""
    # the SDK's "session manager started/shutting down" is noise on a person's terminal
    logging.getLogger("mcp.server.streamable_http_manager").setLevel(logging.WARNING)
    # HttpGuard checks Host and Origin with one loopback rule; the SDK's exact lists refused
    # loopback names the docs allow (127.0.0.2, a.localhost, a Host without a port).
    return build_server(app, remote=True).streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


#: What `tideline serve --transport http` hands the web driver to serve beside its routes.
MCP_ENDPOINT = Endpoint("MCP", MCP_PATH, MCP_BODY_LIMIT, mcp_app)


def http_app(app: Tideline, host: str = DEFAULT_HOST) -> HttpGuard:
    """The MCP endpoint alone behind the guard (the app's `token` setting, Origin, and Host on a
    loopback bind): one namespace, so the tokens file is not read."""
    tokens = server_tokens(app.settings, host, file=False)
    return HttpGuard(
        mcp_app(app, host),
        tokens,
        check_host=is_loopback(host),
        body_limit=lambda _method, _path: MCP_BODY_LIMIT,
        throttle=Throttle(app.clock),
    )


def serve_stdio(app: Tideline) -> None:
    """Serve over stdio until the client closes stdin, then start a sleep when
    `sleep_on_exit` is set."""
    anyio.run(build_server(app).run_stdio_async)
    if app.settings.sleep_on_exit:  # the client closed stdin: the agent session ended
        start_exit_sleep(app.settings, "the MCP client disconnected")
