"""The web layer's fixed names — paths, cookies and form fields, in one place — and how large a
request body each route takes (the guard refuses a larger one unread, 413).

Each cap is the largest body a valid request can need, from the core's own limits: JSON may
spell one character as up to twelve bytes (`\\ud83d\\ude00`) and one byte of a note as six
(`\\u0001`). Everything else is small: a panel form carries a token, a reason or a button.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tideline.library import MAX_FILE_BYTES
from tideline.memory import MAX_TURN_CHARS
from tideline.serve import KIB, MIB, Endpoint

API = "/api"
API_DOCS = "/api/docs"  # the API reference page, rendered here from the OpenAPI schema
STATIC = "/static"
LOGIN = "/login"
FAVICON = "/favicon.ico"
LOGOUT = "/logout"
SESSION_COOKIE = "tideline_session"  # a signed login session (`_session`), set by the login form
CSRF_COOKIE = "tideline_csrf"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"

FORM = 64 * KIB  # a panel form: the token, a reason, a button
JSON = 1 * MIB  # any other API body: a message, a query, lists of ids, a narrative
ROUTES = {
    f"{API}/library/notes": 6 * MAX_FILE_BYTES + 64 * KIB,  # a whole note
    f"{API}/turns": 12 * MAX_TURN_CHARS + 64 * KIB,  # a whole turn
}


def body_limits(endpoints: Sequence[Endpoint]) -> Callable[[str, str], int]:
    """The cap of `method path`, in bytes, with each endpoint served beside (MCP) its own."""
    routes = ROUTES | {e.path: e.body_limit for e in endpoints}

    def body_limit(method: str, path: str) -> int:
        path = path.rstrip("/") or "/"
        if path in routes:
            return routes[path]
        return JSON if path == API or path.startswith(API + "/") else FORM

    return body_limit
