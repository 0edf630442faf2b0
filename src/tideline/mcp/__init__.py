"""The MCP driver: Tideline's memory and library as MCP tools over stdio or streamable HTTP.

A driver only: it maps JSON arguments and errors onto the core API (`tideline.app.Tideline`).
The HTTP guard and the pydantic reading of `tideline.fields` are public for `tideline.web`,
which serves the same endpoint beside its REST API and panel under the same rules.
"""

from tideline.mcp._base import ToolServer, names, to_dict
from tideline.mcp._body import KIB, MIB
from tideline.mcp._fields import annotated
from tideline.mcp._guard import NAMESPACE, HttpGuard, Sessions, is_loopback
from tideline.mcp._tokens import Key, Tokens
from tideline.mcp.server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    MCP_BODY_LIMIT,
    MCP_PATH,
    build_server,
    check_bind,
    http_app,
    mcp_app,
    own_key,
    run_http,
    serve_stdio,
    server_tokens,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "KIB",
    "MCP_BODY_LIMIT",
    "MCP_PATH",
    "MIB",
    "NAMESPACE",
    "HttpGuard",
    "Key",
    "Sessions",
    "Tokens",
    "ToolServer",
    "annotated",
    "build_server",
    "check_bind",
    "http_app",
    "is_loopback",
    "mcp_app",
    "names",
    "own_key",
    "run_http",
    "serve_stdio",
    "server_tokens",
    "to_dict",
]
