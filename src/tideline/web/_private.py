"""Every answer of the panel, the API and the endpoints beside them is private: never stored
by a browser or a proxy, never shown inside another page's frame.

SameSite=Strict cookies do not stop a page on another localhost port (the same site) from
framing the panel and leading its user's clicks (issue 31), and a cached page of memories
outlives the session in the browser's cache. So every response gets `Cache-Control: no-store`
and both framing denials (`X-Frame-Options: DENY` for older browsers, CSP `frame-ancestors
'none'`); the static stylesheet and scripts, which show no memory, stay cacheable.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tideline.web._routes import STATIC

PRIVATE = {
    "cache-control": "no-store",
    "x-frame-options": "DENY",
    "content-security-policy": "frame-ancestors 'none'",
}


class Private:
    """ASGI middleware: the headers above on every HTTP response (see the module docstring)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = str(scope.get("path", "")).startswith(f"{STATIC}/")

        async def private(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in PRIVATE.items():
                    if not (static and name == "cache-control"):
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, private)
