"""The HTTP guard in front of what `serve` answers on HTTP (the MCP endpoint, the REST API, the
panel): a bearer token, a browser-Origin and a Host check.

Two threats, three checks, all before any request reaches the MCP session manager (and a
fourth for everyone: a body over its route's cap is refused unread, `tideline.serve._body`):

- Another user or machine on the network. When tokens are configured every request must carry
  `Authorization: Bearer <token>` (`Tokens`: compared in constant time), else 401; the token's
  namespace goes on with the request (`scope[NAMESPACE]`). `serve()` refuses to listen on a
  non-loopback address without one.
- A web page in the user's own browser (DNS rebinding, cross-site fetch to 127.0.0.1). Browsers
  always send `Origin` on such requests; an Origin whose host is not loopback gets 403. Clients
  that are not browsers send no Origin and pass (like qmd's origin guard). On a loopback bind the
  `Host` header must name a loopback host too (a rebinding page's requests carry its own domain),
  else 421. "Loopback" is one rule, `is_loopback`, for both headers: `localhost` and `*.localhost`,
  127.0.0.0/8 and ::1, with or without a port — the SDK's own check (exact `127.0.0.1:port`,
  `localhost:port`) is switched off because it refused loopback hosts the docs allow.

A browser cannot add a header to a page it navigates to, so the web panel (`tideline.web`) gives
`sessions` whose cookie opens a namespace instead (set by its login form, HttpOnly,
SameSite=Strict, signed with a secret of the server's and ending),
`public` path prefixes that need no token (the login form and its stylesheet), and a `login` page
an unauthorised browser GET is sent to. Host and Origin are checked on every path.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from typing import Protocol
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from tideline.serve._body import BodyLimit, read_capped, too_large
from tideline.serve._throttle import Throttle
from tideline.serve._tokens import Key, Tokens

log = logging.getLogger("tideline.serve")

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})
#: The ASGI scope key under which a let-in request carries its namespace (`Tokens` key).
NAMESPACE = "tideline.namespace"


class Sessions(Protocol):
    """Login sessions carried by a cookie (the web panel's): which namespace one opens."""

    @property
    def name(self) -> str:
        """The cookie's name."""
        ...

    def find(self, value: str | None) -> Key | None:
        """The namespace the cookie's `value` opens, or None."""
        ...


def is_loopback(host: str) -> bool:
    """True for `localhost`, 127.0.0.0/8 and ::1 (with or without brackets)."""
    host = host.strip().strip("[]").lower()
    if host in LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_allowed(host: str | None) -> bool:
    """A `Host` header (`name`, `name:port`, `[::1]:port`) that names a loopback host."""
    if not host:
        return False
    try:
        name = urlsplit(f"//{host.strip()}").hostname
    except ValueError:  # an unbalanced `[` in the header
        return False
    return name is not None and name != "" and is_loopback(name)


def origin_allowed(origin: str | None) -> bool:
    """No Origin (not a browser) or an http(s) Origin on a loopback host."""
    if origin is None:
        return True
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False  # includes the opaque "null" origin of sandboxed pages and file://
    return is_loopback(parts.hostname)


class HttpGuard:
    """ASGI middleware: Host check (on a loopback bind), Origin check, then the bearer token."""

    def __init__(
        self,
        app: ASGIApp,
        tokens: Tokens | None = None,
        *,
        check_host: bool = True,
        sessions: Sessions | None = None,
        public: tuple[str, ...] = (),
        login: str | None = None,
        body_limit: BodyLimit | None = None,
        throttle: Throttle,
    ) -> None:
        self.app = app
        #: Wrong tokens per client (`_throttle`): the login form counts its own through it.
        self.throttle = throttle
        self._body_limit = body_limit
        self.tokens = tokens or Tokens()
        self._check_host = check_host
        self._sessions = sessions
        self._public = public
        self._login = login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        if self._check_host and not host_allowed(host):
            log.warning("refused a request for Host %r", host)
            await _reject(
                send,
                421,
                f"Host {host!r} is not a loopback name: this server listens on loopback only; "
                "connect to http://127.0.0.1:<port>/mcp or http://localhost:<port>/mcp",
            )
            return
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
        if self.tokens and not self._let_in(scope, headers):
            if (
                self._login
                and scope["method"] == "GET"
                and "text/html" in headers.get("accept", "")
            ):
                await _redirect(send, self._login)
                return
            if headers.get("authorization") and (wait := self.throttle.wrong(client_of(scope))):
                await _reject(
                    send,
                    429,
                    f"too many wrong bearer tokens from this address; wait {wait} s",
                    {"retry-after": str(wait)},
                )
                return
            await _reject(
                send,
                401,
                "missing or wrong bearer token: send 'Authorization: Bearer <TIDELINE_TOKEN>'",
                {"www-authenticate": 'Bearer realm="tideline"'},
            )
            return
        if self._body_limit is not None:
            limit = self._body_limit(scope["method"], scope.get("path", ""))
            capped = await read_capped(scope, headers, receive, limit)
            if capped is None:
                log.warning("refused a body over %d bytes for %s", limit, scope.get("path"))
                await _reject(send, 413, too_large(scope, limit), {"connection": "close"})
                return
            receive = capped
        await self.app(scope, receive, send)

    def _let_in(self, scope: Scope, headers: Headers) -> bool:
        """The bearer header or (with `sessions`) a session cookie opens a namespace, which the
        request carries on (`scope[NAMESPACE]`); a public path needs none."""
        scheme, _, value = headers.get("authorization", "").partition(" ")
        key = self.tokens.find(value.strip()) if scheme.lower() == "bearer" else None
        if key is None and self._sessions is not None:
            key = self._sessions.find(_cookie(headers, self._sessions.name))
        if key is not None:
            scope[NAMESPACE] = key
            return True
        path = scope.get("path", "")
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p in self._public)


def client_of(scope: Scope) -> str:
    """The address a request came from (what wrong tokens are counted by)."""
    client = scope.get("client")
    return str(client[0]) if client else "an unknown address"


def _cookie(headers: Headers, name: str) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _redirect(send: Send, location: str) -> None:
    headers = [(b"location", location.encode()), (b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


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
