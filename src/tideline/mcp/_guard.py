"""The HTTP guard in front of the MCP endpoint: a bearer token and a browser-Origin check.

Two threats, two checks, both before any request reaches the MCP session manager:

- Another user or machine on the network. When a token is configured every request must carry
  `Authorization: Bearer <token>` (compared in constant time), else 401. `serve()` refuses to
  listen on a non-loopback address without one.
- A web page in the user's own browser (DNS rebinding, cross-site fetch to 127.0.0.1). Browsers
  always send `Origin` on such requests; an Origin whose host is not loopback gets 403. Clients
  that are not browsers send no Origin and pass (like qmd's origin guard).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("tideline.mcp")

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})


def is_loopback(host: str) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1 (with or without brackets)."""
    host = host.strip().strip("[]").lower()
    if host in LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None) -> bool:
    """No Origin (not a browser) or an http(s) Origin on a loopback host."""
    if origin is None:
        return True
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False  # includes the opaque "null" origin of sandboxed pages and file://
    return is_loopback(parts.hostname)


class HttpGuard:
    """ASGI middleware: Origin check, then the bearer token (when one is set)."""

    def __init__(self, app: ASGIApp, token: str | None = None) -> None:
        self.app = app
        self._token = token.encode() if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if not origin_allowed(origin):
            log.warning("refused a request from Origin %r", origin)
            await _reject(
                send,
                403,
                f"Origin {origin!r} is not allowed: this server only answers pages served from "
                "localhost; connect from an MCP client instead of a web page",
            )
            return
        if self._token is not None and not self._authorized(headers.get("authorization")):
            await _reject(
                send,
                401,
                "missing or wrong bearer token: send 'Authorization: Bearer <TIDELINE_TOKEN>'",
                {"www-authenticate": 'Bearer realm="tideline"'},
            )
            return
        await self.app(scope, receive, send)

    def _authorized(self, header: str | None) -> bool:
        assert self._token is not None
        scheme, _, value = (header or "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(value.strip().encode(), self._token)


async def _reject(
    send: Send, status: int, message: str, extra: dict[str, str] | None = None
) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
