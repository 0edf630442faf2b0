"""The panel's login session and its CSRF tokens, both signed with a secret of this server's.

A browser cannot send the bearer token with a page it opens, so the login form checks the token
once and sets a session cookie instead: `<payload>.<mac>`, the payload naming the namespace the
token opened and when the session ends, the MAC an HMAC-SHA256 of it under `secret`. The secret
is random for each server start and never written anywhere: a cookie from another server, from
before a restart, of another scheme or edited by hand opens nothing, and a restart logs every
browser out (one token paste, on a panel that listens on loopback). A session ends after
`panel_session_hours`; the cookie's Max-Age says the same to the browser.

A form's CSRF token is an HMAC under the same secret of the browser's `tideline_csrf` cookie (a
random nonce) and its session cookie: a page on another site — even one on another localhost
port, which can set cookies for this host — cannot compute it, and a token from one login does
not pass with another.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Collection

from tideline.errors import ConfigError
from tideline.serve import Key
from tideline.web._routes import SESSION_COOKIE

#: Longest session cookie read: a payload of two names and two numbers is far shorter.
MAX_COOKIE = 1024


class PanelSessions:
    """Issues and reads this server's session cookies and CSRF tokens (see the module doc)."""

    name = SESSION_COOKIE

    def __init__(
        self,
        hours: float,
        keys: Collection[Key] | None,
        clock: Callable[[], float],
    ) -> None:
        if not 0 < hours <= 24 * 366:
            raise ConfigError(
                f"panel_session_hours={hours}: a panel login lasts more than 0 hours and at "
                "most a year; set TIDELINE_PANEL_SESSION_HOURS to e.g. 12"
            )
        self.seconds = max(1, int(hours * 3600))
        self._keys = keys  # the namespaces a session may name (the guard's tokens'); None: any
        self._clock = clock
        self._secret = secrets.token_bytes(32)

    def issue(self, key: Key) -> str:
        """A session cookie for the namespace `key`, ending `hours` from now."""
        agent, user = key
        fields = {"a": agent, "u": user, "x": int(self._clock()) + self.seconds}
        payload = _b64(json.dumps(fields, separators=(",", ":")).encode())
        return f"{payload}.{self._mac('session', payload)}"

    def find(self, value: str | None) -> Key | None:
        """The namespace a cookie opens: None unless it is this server's, unedited and not over."""
        if not value or len(value) > MAX_COOKIE or value.count(".") != 1:
            return None
        payload, mac = value.split(".")
        if not hmac.compare_digest(mac.encode(), self._mac("session", payload).encode()):
            return None
        # ours, unedited: the MAC matched
        fields = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        if fields["x"] <= self._clock():
            return None
        key: Key = (fields["a"], fields["u"])
        return key if self._keys is None or key in self._keys else None

    def csrf(self, nonce: str, session: str | None) -> str:
        """The CSRF token of a browser's nonce cookie and session cookie (empty: none)."""
        return self._mac("csrf", f"{nonce}\n{session or ''}")

    def _mac(self, purpose: str, text: str) -> str:
        digest = hmac.new(self._secret, f"{purpose}\n{text}".encode(), hashlib.sha256).digest()
        return _b64(digest)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
