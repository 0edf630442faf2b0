"""CSRF protection for the panel: a double-submit token tied to a cookie.

Every page sets a random `tideline_csrf` cookie (HttpOnly, SameSite=Strict) and puts the same value
in its forms; a form POST must send it back as the field `csrf`. A page on another site can make
the browser send the cookie but cannot read it, so it cannot fill the field. The API accepts the
value in the `X-CSRF-Token` header instead, and asks for it only when the request carries the
panel's cookies (a browser); scripts and agents send no cookies and the bearer token.
The Origin check in front of everything (`HttpGuard`) is a second wall.
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import HTTPException, Request, Response

from tideline.web._names import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE

MESSAGE = (
    "missing or wrong CSRF token: reload the page and submit its form again "
    "(scripts: send no cookies, or the tideline_csrf cookie's value as X-CSRF-Token)"
)


def token_for(request: Request) -> str:
    """The token for the page being rendered: the cookie's, else a new one (set by `keep`)."""
    known = request.cookies.get(CSRF_COOKIE)
    if known:
        return known
    fresh: str | None = getattr(request.state, "csrf", None)
    if fresh is None:
        fresh = secrets.token_urlsafe(32)
        request.state.csrf = fresh
    return fresh


def keep(request: Request, response: Response) -> None:
    """Set the cookie when this page made a new token."""
    fresh = getattr(request.state, "csrf", None)
    if fresh and not request.cookies.get(CSRF_COOKIE):
        response.set_cookie(CSRF_COOKIE, fresh, httponly=True, samesite="strict", path="/")


def check(request: Request, sent: str | None) -> None:
    """Refuse (403) unless `sent` equals the cookie."""
    cookie = request.cookies.get(CSRF_COOKIE)
    if not cookie or not sent or not hmac.compare_digest(cookie.encode(), sent.encode()):
        raise HTTPException(403, MESSAGE)


def check_api(request: Request) -> None:
    """The API's rule for unsafe methods: a request with the panel's cookies needs the header."""
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    if CSRF_COOKIE in request.cookies or SESSION_COOKIE in request.cookies:
        check(request, request.headers.get(CSRF_HEADER))
