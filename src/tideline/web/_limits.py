"""How large a request body each route takes (the guard refuses a larger one unread, 413).

Each cap is the largest body a valid request can need, from the core's own limits: JSON may
spell one character as up to twelve bytes (`\\ud83d\\ude00`) and one byte of a note as six
(`\\u0001`). Everything else is small: a panel form carries a token, a reason or a button.
"""

from __future__ import annotations

from tideline.library import MAX_FILE_BYTES
from tideline.mcp import KIB, MCP_BODY_LIMIT, MIB
from tideline.memory import MAX_TURN_CHARS
from tideline.web._names import API

FORM = 64 * KIB  # a panel form: the token, a reason, a button
JSON = 1 * MIB  # any other API body: a message, a query, lists of ids, a narrative
ROUTES = {
    f"{API}/library/notes": 6 * MAX_FILE_BYTES + 64 * KIB,  # a whole note
    f"{API}/turns": 12 * MAX_TURN_CHARS + 64 * KIB,  # a whole turn
    "/mcp": MCP_BODY_LIMIT,
}


def body_limit(method: str, path: str) -> int:
    """The cap of `method path`, in bytes."""
    path = path.rstrip("/") or "/"
    if path in ROUTES:
        return ROUTES[path]
    return JSON if path == API or path.startswith(API + "/") else FORM
