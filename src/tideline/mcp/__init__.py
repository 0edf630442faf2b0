"""The MCP driver: Tideline's memory and library as MCP tools over stdio or streamable HTTP.

A driver only: it maps JSON arguments and errors onto the core API (`tideline.app.Tideline`).
"""

from tideline.mcp.server import TidelineServer, build_server, check_bind, serve

__all__ = ["TidelineServer", "build_server", "check_bind", "serve"]
