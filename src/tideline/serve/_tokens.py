"""Which namespace a bearer token opens: the server's own token and the tokens file.

One `tideline serve --transport http` may answer for several namespaces (an agent, optionally
one of its users). `TIDELINE_TOKEN` opens the server's own namespace; `TIDELINE_TOKENS_FILE`
names a TOML file with more:

    [[token]]
    token = "…"          # what clients send as `Authorization: Bearer …`
    agent = "hui"
    user = "ana"         # optional
    library = "notes/hui"  # optional: the namespace's own library root (else it has none)

A namespace's library is its own: the `library` of its entries (relative to the file's folder),
never the server's `memo_root`, and no two namespaces' roots may be one inside the other
(`server_tokens` checks). Tokens are kept as SHA-256 digests and every lookup compares the digest with each entry in
constant time, so neither a token nor its length shows in how long a refusal takes. (The
panel's login cookie is the web driver's: `tideline.web._session`.)
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
FILE_KEYS = frozenset({"token", "agent", "user", "library"})
EXAMPLE = '[[token]] token = "<secret>" agent = "<agent>" (user, library: optional)'


@dataclass(frozen=True)
class Grant:
    """What one token opens: a namespace and, when given, that namespace's library root."""

    token: str
    key: Key
    library: Path | None = None


@dataclass(frozen=True)
class _Entry:
    digest: bytes
    key: Key


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class Tokens:
    """Tokens → namespaces. Empty: the server asks for no token (loopback only)."""

    def __init__(self, grants: Iterable[Grant] = ()) -> None:
        grants = tuple(grants)
        self._entries = tuple(_Entry(_digest(g.token), g.key) for g in grants)
        self._libraries = {g.key: g.library for g in grants}

    def __bool__(self) -> bool:
        return bool(self._entries)

    @property
    def keys(self) -> set[Key]:
        return {e.key for e in self._entries}

    def library(self, key: Key) -> Path | None:
        """The library root the tokens file gives the namespace `key` (None: no library)."""
        return self._libraries.get(key)

    def find(self, token: str | None) -> Key | None:
        """The namespace `token` opens, or None; every entry is compared (constant time)."""
        if not token:
            return None
        digest = _digest(token)
        return self._match(lambda e: hmac.compare_digest(e.digest, digest))

    def _match(self, same: Callable[[_Entry], bool]) -> Key | None:
        found = None
        for entry in self._entries:  # no early exit: the time does not depend on the position
            if same(entry):
                found = entry.key
        return found


def read_tokens_file(path: Path) -> list[Grant]:
    """The grants of a tokens file; a bad file is one `InvalidInput` naming the file, the entry
    and the fix."""
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
    grants = [_entry(path, n, entry) for n, entry in enumerate(entries, 1)]
    seen: set[str] = set()
    libraries: dict[Key, Path | None] = {}
    for n, grant in enumerate(grants, 1):
        if grant.token in seen:
            raise InvalidInput(f"tokens file {path}: entry {n} repeats a token; give each its own")
        seen.add(grant.token)
        if libraries.setdefault(grant.key, grant.library) != grant.library:
            raise InvalidInput(
                f"tokens file {path}: entry {n} gives its namespace another library than an "
                "earlier entry for the same namespace; give both the same 'library'"
            )
    return grants


def _entry(path: Path, n: int, entry: object) -> Grant:
    where = f"tokens file {path}: entry {n}"
    if not isinstance(entry, dict) or set(entry) - FILE_KEYS:
        extra = sorted(set(entry) - FILE_KEYS) if isinstance(entry, dict) else []
        raise InvalidInput(
            f"{where} has unknown key(s) {extra}; use token, agent, user and library"
        )
    token, agent, user = entry.get("token"), entry.get("agent"), entry.get("user")
    library = entry.get("library")
    if not isinstance(token, str) or not token.strip() or token.strip() != token:
        raise InvalidInput(f"{where}: 'token' must be a string without spaces around it")
    if not isinstance(agent, str) or (user is not None and not isinstance(user, str)):
        raise InvalidInput(f"{where}: 'agent' (and 'user', if given) must be strings")
    if library is not None and (not isinstance(library, str) or not library.strip()):
        raise InvalidInput(f"{where}: 'library', if given, must name a folder")
    try:
        Namespace(agent, user or None)  # the same names on both engines
    except TidelineError as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    root = (path.parent / Path(library).expanduser()).resolve() if library else None
    return Grant(token, (agent, user or None), root)
