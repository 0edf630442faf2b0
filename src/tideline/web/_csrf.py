"""CSRF protection for the panel: a token bound to the browser and its login session.

Every page sets a random `tideline_csrf` cookie (HttpOnly, SameSite=Strict) when the browser has
none, and puts in its forms the token `PanelSessions.csrf` makes of that nonce and the session
cookie under the server's secret; a form POST must send it back as the field `csrf`. Another site
can make the browser send both cookies, and even choose the nonce (a page on another localhost
port can set cookies for this host), but it cannot compute the token; a token from before a
login, from another login or from before a restart does not pass. The API accepts the token in
the `X-CSRF-Token` header instead, and asks for it only when the request carries the panel's
cookies (a browser); scripts and agents send no cookies and the bearer token. The Origin check
in front of everything (`HttpGuard`) is a second wall.
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import HTTPException, Request, Response

from tideline.web._routes import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE
from tideline.web._session import PanelSessions

MESSAGE = (
    "missing or wrong CSRF token: reload the page and submit its form again "
    "(scripts: send no cookies, or the page's csrf-token as X-CSRF-Token)"
)


def _sessions(request: Request) -> PanelSessions:
    sessions: PanelSessions = request.app.state.web.sessions
    return sessions


def token_for(request: Request) -> str:
    """The token for the page being rendered (a new nonce is set by `keep`)."""
    nonce = request.cookies.get(CSRF_COOKIE)
    if not nonce:
        nonce = getattr(request.state, "csrf", None) or secrets.token_urlsafe(32)
        request.state.csrf = nonce
    return _sessions(request).csrf(nonce, request.cookies.get(SESSION_COOKIE))


def keep(request: Request, response: Response) -> None:
    """Set the nonce cookie when this page made a new one."""
    fresh = getattr(request.state, "csrf", None)
    if fresh and not request.cookies.get(CSRF_COOKIE):
        response.set_cookie(CSRF_COOKIE, fresh, httponly=True, samesite="strict", path="/")


def check(request: Request, sent: str | None) -> None:
    """Refuse (403) unless `sent` is the token of this browser's cookies."""
    nonce = request.cookies.get(CSRF_COOKIE)
    if not nonce or not sent:
        raise HTTPException(403, MESSAGE)
    expected = _sessions(request).csrf(nonce, request.cookies.get(SESSION_COOKIE))
    if not hmac.compare_digest(expected.encode(), sent.encode()):
        raise HTTPException(403, MESSAGE)


def check_api(request: Request) -> None:
    """The API's rule for unsafe methods: a request with the panel's cookies needs the header."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    if CSRF_COOKIE in request.cookies or SESSION_COOKIE in request.cookies:
        check(request, request.headers.get(CSRF_HEADER))
