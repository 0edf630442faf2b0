"""The MCP driver: Tideline's memory and library as MCP tools over stdio or streamable HTTP.

A driver only: it maps JSON arguments and errors onto the core API (`tideline.app.Tideline`).
"""

from tideline.mcp._base import ToolServer
from tideline.mcp.server import build_server, check_bind, http_app, serve

__all__ = ["ToolServer", "build_server", "check_bind", "http_app", "serve"]
