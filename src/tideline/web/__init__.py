"""The web driver: a REST API and a server-rendered panel over the same services as the MCP tools,
served with the MCP endpoint on one port (`tideline serve --transport http`). See docs/web.md.

A driver only: it maps requests and errors onto `tideline.app.Tideline`; templates and static
files ship inside the package, so the panel needs no network.
"""

from tideline.web.server import http_app, serve, web_app

__all__ = ["http_app", "serve", "web_app"]
