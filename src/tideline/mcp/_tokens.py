"""Which namespace a bearer token opens: the server's own token and the tokens file.

One `tideline serve --transport http` may answer for several namespaces (an agent, optionally
one of its users). `TIDELINE_TOKEN` opens the server's own namespace; `TIDELINE_TOKENS_FILE`
names a TOML file with more:

    [[token]]
    token = "…"          # what clients send as `Authorization: Bearer …`
    agent = "hui"
    user = "ana"         # optional

Tokens are kept as SHA-256 digests and every lookup compares the digest with each entry in
constant time, so neither a token nor its length shows in how long a refusal takes. The panel's
cookie is a MAC of the token: it names one namespace and is not itself a bearer token.
"""

from __future__ import annotations

import hashlib
import hmac
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tideline.errors import InvalidInput, TidelineError
from tideline.store import Namespace

#: A namespace as the server keys it: (agent, user or None).
Key = tuple[str, str | None]
FILE_KEYS = frozenset({"token", "agent", "user"})
EXAMPLE = '[[token]] token = "<secret>" agent = "<agent>" (user = "<user>" optional)'


@dataclass(frozen=True)
class _Entry:
    digest: bytes
    cookie: bytes
    key: Key


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def cookie_of(token: str) -> str:
    """What the panel's cookie holds once `token` was given (cookie-safe, not the token)."""
    return hmac.new(token.encode(), b"tideline panel cookie", hashlib.sha256).hexdigest()


class Tokens:
    """Tokens → namespaces. Empty: the server asks for no token (loopback only)."""

    def __init__(self, pairs: Iterable[tuple[str, Key]] = ()) -> None:
        self._entries = tuple(
            _Entry(_digest(token), cookie_of(token).encode(), key) for token, key in pairs
        )

    def __bool__(self) -> bool:
        return bool(self._entries)

    @property
    def keys(self) -> set[Key]:
        return {e.key for e in self._entries}

    def find(self, token: str | None) -> Key | None:
        """The namespace `token` opens, or None; every entry is compared (constant time)."""
        if not token:
            return None
        digest = _digest(token)
        return self._match(lambda e: hmac.compare_digest(e.digest, digest))

    def find_cookie(self, value: str | None) -> Key | None:
        """The namespace a panel cookie was issued for, or None."""
        if not value:
            return None
        sent = value.encode()
        return self._match(lambda e: hmac.compare_digest(e.cookie, sent))

    def _match(self, same: Callable[[_Entry], bool]) -> Key | None:
        found = None
        for entry in self._entries:  # no early exit: the time does not depend on the position
            if same(entry):
                found = entry.key
        return found


def read_tokens_file(path: Path) -> list[tuple[str, Key]]:
    """The (token, namespace) pairs of a tokens file; a bad file is one `InvalidInput` naming
    the file, the entry and the fix."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(
            f"tokens file {path} does not exist; create it or unset TIDELINE_TOKENS_FILE"
        ) from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(
            f"tokens file {path} cannot be read ({exc}); write it as {EXAMPLE}"
        ) from None
    entries = data.get("token")
    unknown = sorted(set(data) - {"token"})
    if unknown or not isinstance(entries, list) or not entries:
        raise InvalidInput(f"tokens file {path} needs [[token]] entries only; write {EXAMPLE}")
    pairs: list[tuple[str, Key]] = []
    for n, entry in enumerate(entries, 1):
        pairs.append(_entry(path, n, entry))
    seen: set[str] = set()
    for n, (token, _) in enumerate(pairs, 1):
        if token in seen:
            raise InvalidInput(f"tokens file {path}: entry {n} repeats a token; give each its own")
        seen.add(token)
    return pairs


def _entry(path: Path, n: int, entry: object) -> tuple[str, Key]:
    where = f"tokens file {path}: entry {n}"
    if not isinstance(entry, dict) or set(entry) - FILE_KEYS:
        extra = sorted(set(entry) - FILE_KEYS) if isinstance(entry, dict) else []
        raise InvalidInput(f"{where} has unknown key(s) {extra}; use token, agent and user")
    token, agent, user = entry.get("token"), entry.get("agent"), entry.get("user")
    if not isinstance(token, str) or not token.strip() or token.strip() != token:
        raise InvalidInput(f"{where}: 'token' must be a string without spaces around it")
    if not isinstance(agent, str) or (user is not None and not isinstance(user, str)):
        raise InvalidInput(f"{where}: 'agent' (and 'user', if given) must be strings")
    try:
        Namespace(agent, user or None)  # the same names on both engines
    except TidelineError as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    return token, (agent, user or None)
