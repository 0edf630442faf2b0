"""The MCP driver: Tideline's memory and library as MCP tools over stdio or streamable HTTP.

A driver only: it maps JSON arguments and errors onto the core API (`tideline.app.Tideline`).
The HTTP guard and the pydantic reading of `tideline.fields` are public for `tideline.web`,
which serves the same endpoint beside its REST API and panel under the same rules.
"""

from tideline.mcp._base import ToolServer, names, to_dict
from tideline.mcp._fields import annotated
from tideline.mcp._guard import HttpGuard, is_loopback
from tideline.mcp.server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    build_server,
    check_bind,
    http_app,
    mcp_app,
    run_http,
    serve_stdio,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HttpGuard",
    "ToolServer",
    "annotated",
    "build_server",
    "check_bind",
    "http_app",
    "is_loopback",
    "mcp_app",
    "names",
    "run_http",
    "serve_stdio",
    "to_dict",
]
