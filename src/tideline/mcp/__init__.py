"""The MCP driver: Tideline's memory and library as MCP tools over stdio or streamable HTTP.

A driver only: it maps JSON arguments and errors onto the core API (`tideline.app.Tideline`).
Over HTTP it answers behind the guard of `tideline.serve`; `MCP_ENDPOINT` is what
`tideline serve` hands the web driver to serve beside its REST API and panel under the same
rules (the drivers never import each other).
"""

from tideline.mcp._tool_server import ToolServer
from tideline.mcp.server import (
    MCP_BODY_LIMIT,
    MCP_ENDPOINT,
    MCP_PATH,
    build_server,
    http_app,
    mcp_app,
    serve_stdio,
)

__all__ = [
    "MCP_BODY_LIMIT",
    "MCP_ENDPOINT",
    "MCP_PATH",
    "ToolServer",
    "build_server",
    "http_app",
    "mcp_app",
    "serve_stdio",
]
