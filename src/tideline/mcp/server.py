"""The MCP server: one `MCPServer` with every Tideline tool, served over stdio or streamable HTTP.

The server only maps. Arguments arrive as JSON, are checked against each tool's schema (after
renaming the synonyms models like to use, `limit` for `k`), and go to the core API; core errors
(`TidelineError`) and schema violations come back as tool errors (`isError`) with a one-line
message that says what to call next. A crash is logged with its traceback and returned as a tool
error too, so one bad call never takes the server down.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from tideline.errors import InvalidInput, TidelineError
from tideline.mcp import analysis_tools, inject_tools, library_tools, memory_tools
from tideline.mcp._guard import HttpGuard, is_loopback

if TYPE_CHECKING:
    from tideline.app import Tideline

log = logging.getLogger("tideline.mcp")

Transport = Literal["stdio", "http"]
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"


class TidelineServer(MCPServer[Any]):
    """`MCPServer` plus argument synonyms and errors a model can act on.

    `tool_aliases[tool][alias] = argument`: an alias is renamed to the argument it stands for
    unless the argument itself was given.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_aliases: dict[str, dict[str, str]] = {}
        self.closers: list[Callable[[], object]] = []

    def close(self) -> None:
        """Release what the tool modules opened (library indexes); the app is closed by its owner."""
        while self.closers:
            self.closers.pop()()

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
        if name not in schemas:
            raise ToolError(
                f"there is no tool {name!r}; the tools are: {', '.join(sorted(schemas))}"
            )
        arguments = self._normalise(name, dict(arguments or {}), schemas[name])
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            raise ToolError(_message(name, exc)) from None

    def _normalise(
        self, name: str, arguments: dict[str, Any], schema: Mapping[str, Any]
    ) -> dict[str, Any]:
        known = set(schema.get("properties", {}))
        for alias, target in self.tool_aliases.get(name, {}).items():
            if alias in arguments and alias not in known:
                value = arguments.pop(alias)
                arguments.setdefault(target, value)
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise ToolError(
                f"{name} has no argument {', '.join(map(repr, unknown))}; "
                f"its arguments are: {', '.join(sorted(known))}"
            )
        return arguments


def _message(tool: str, exc: ToolError) -> str:
    """One line for the model: the core's own message, the schema violation, or a crash note."""
    cause = exc.__cause__
    if isinstance(cause, TidelineError | ToolError) and not isinstance(cause, UnexpectedToolError):
        return _one_line(str(cause))
    if isinstance(cause, ValidationError):
        return describe_validation(tool, cause)
    if isinstance(exc, UnexpectedToolError):
        log.error("tool %s crashed", tool, exc_info=cause or exc)
        kind = type(cause).__name__ if cause else "error"
        return (
            f"{tool} failed with an unexpected {kind}; the server logged it and is still "
            "running; retry once, and if it fails again continue without this tool"
        )
    return _one_line(str(exc))


def describe_validation(tool: str, exc: ValidationError) -> str:
    """`memory_search: argument 'k' must be ... (got 'ten'); check the memory_search schema`."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"missing required argument {where!r}")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            msg = err["msg"][:1].lower() + err["msg"][1:]
            parts.append(f"argument {where!r}: {msg} (got {got})")
    return _one_line(f"{tool}: {'; '.join(parts)}; fix the arguments to match the {tool} schema")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def build_server(app: Tideline) -> TidelineServer:
    """All tools on one server: the memory tools and the library tools."""
    agent = app.settings.agent_name
    server = TidelineServer(
        name="tideline",
        title=f"Tideline — {agent}'s memory",
        instructions=(
            f"This server is {agent}'s long-term memory. Call memory_search before answering "
            "anything about the past or the user; call sync_turn for every conversation turn so "
            "the raw context is kept; call memory_write when something is worth remembering; "
            "call memory_trace to read the conversation behind a memory."
        ),
        log_level="INFO",
    )
    memory_tools.register(server, app)
    analysis_tools.register(server, app)
    inject_tools.register(server, app)
    _register_library_tools(server, app)
    return server


def _register_library_tools(server: TidelineServer, app: Tideline) -> None:
    """The library opens on first use, so a server without MEMO_ROOT still starts."""
    handle = library_tools.register(server, app.settings)
    server.closers.append(handle.close)


def check_bind(host: str, token: str | None) -> None:
    """Refuse a non-loopback address without a token: anyone on the network could read memory."""
    if not is_loopback(host) and not token:
        raise InvalidInput(
            f"refusing to listen on {host} without a token: anyone who can reach it could read "
            "and write this memory; set TIDELINE_TOKEN to a long random secret (clients send "
            "'Authorization: Bearer <secret>') or use --host 127.0.0.1"
        )


def serve(
    app: Tideline,
    transport: Transport = "stdio",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
) -> None:
    """Run the server until interrupted (stdio: until the client closes stdin)."""
    if transport == "stdio":
        server = build_server(app)
        try:
            anyio.run(server.run_stdio_async)
        finally:
            server.close()
        return
    if transport != "http":
        raise InvalidInput(f"unknown transport {transport!r}; use stdio or http")
    check_bind(host, token)
    sock = _bind(host, port)
    server = build_server(app)
    # HttpGuard checks Host and Origin with one loopback rule; the SDK's exact lists refused
    # loopback names the docs allow (127.0.0.2, a.localhost, a Host without a port).
    starlette_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    config = uvicorn.Config(
        HttpGuard(starlette_app, token, check_host=is_loopback(host)),
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
    )
    shown = f"[{host}]" if ":" in host else host
    log.info(
        "tideline: %s's memory on http://%s:%d%s (token %s)",
        app.settings.agent_name,
        shown,
        sock.getsockname()[1],
        MCP_PATH,
        "required" if token else "off",
    )
    try:
        anyio.run(uvicorn.Server(config).serve, [sock])
    finally:
        server.close()
        sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """Bind before starting uvicorn so a busy port is a clear error, not a log line and exit 1."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        raise InvalidInput(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
            "choose another --port or stop the process using it"
        ) from None
    sock.set_inheritable(True)
    return sock
