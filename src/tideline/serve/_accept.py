"""Which tokens a server accepts on an address: its own and the tokens file's, each one that could
work (`check_bind`), no token twice, no library inside another namespace's."""

from __future__ import annotations

from pathlib import Path

from tideline.config import Settings
from tideline.errors import InvalidInput
from tideline.serve._guard import is_loopback
from tideline.serve._tokens import Grant, Key, Tokens, read_tokens_file

#: A token for a bind other than loopback: at least this long, with this many distinct
#: characters (`secrets.token_urlsafe(32)` gives 43 and ~30), so "x" or "aaaa…" is refused.
MIN_TOKEN_CHARS = 24
MIN_TOKEN_DISTINCT = 12
MAKE_TOKEN = 'make one with: python -c "import secrets; print(secrets.token_urlsafe(32))"'


def check_bind(host: str, token: str | None, name: str = "TIDELINE_TOKEN") -> None:
    """Refuse tokens that cannot work: a blank one (every request would be refused), one with
    spaces around it (a client's header never matches), a guessable one off loopback — and a
    non-loopback address without a token, where anyone on the network could read memory.
    `name` says where the token came from."""
    if token is not None and token != "" and token.strip() != token:
        what = "blank" if not token.strip() else "padded with spaces"
        raise InvalidInput(
            f"{name} is {what}, so no client could ever send it; unset it or {MAKE_TOKEN}"
        )
    if is_loopback(host):
        return
    if not token:
        raise InvalidInput(
            f"refusing to listen on {host} without a token: anyone who can reach it could read "
            "and write this memory; set TIDELINE_TOKEN to a long random secret (clients send "
            f"'Authorization: Bearer <secret>') or use --host 127.0.0.1; {MAKE_TOKEN}"
        )
    if len(token) < MIN_TOKEN_CHARS or len(set(token)) < MIN_TOKEN_DISTINCT:
        raise InvalidInput(
            f"{name} is too easy to guess for {host} ({len(token)} characters, "
            f"{len(set(token))} distinct; off loopback it needs {MIN_TOKEN_CHARS}+ characters, "
            f"{MIN_TOKEN_DISTINCT}+ distinct); {MAKE_TOKEN}"
        )


def own_key(settings: Settings) -> Key:
    """The server's own namespace: its agent, and its user on PostgreSQL."""
    return settings.agent_name, settings.database_user or None


def server_tokens(settings: Settings, host: str, *, file: bool = True) -> Tokens:
    """The tokens a server on `host` accepts: `token` for its own namespace and (with `file`)
    the tokens file's for theirs, each checked by `check_bind`; a token given twice is refused
    (it could not say which namespace it opens), and so are libraries that overlap."""
    own = own_key(settings)
    grants = [Grant(settings.token, own)] if settings.token else []
    names = ["TIDELINE_TOKEN"] if settings.token else []
    if file and settings.tokens_file:
        path = Path(settings.tokens_file).expanduser()
        found = read_tokens_file(path)
        grants += found
        names += [f"the token of entry {n} in {path}" for n in range(1, len(found) + 1)]
        _check_libraries(settings, path, found)
    if not grants:
        check_bind(host, None)
    for grant, name in zip(grants, names, strict=True):
        check_bind(host, grant.token, name)
    if len({g.token for g in grants}) < len(grants):
        raise InvalidInput(
            f"TIDELINE_TOKEN is also in the tokens file {settings.tokens_file}; a token opens "
            "one namespace: give the file's entry another token"
        )
    return Tokens(grants)


def _check_libraries(settings: Settings, path: Path, grants: list[Grant]) -> None:
    """Each namespace's library is its own: the server's `memo_root` is its own namespace's, and
    no root may be another's or lie inside it (a search of one would read the other's notes)."""
    own = own_key(settings)
    roots: dict[Key, Path] = {}
    if settings.memo_root:
        roots[own] = settings.memo_root.expanduser().resolve()
    for n, grant in enumerate(grants, 1):
        if grant.key == own:
            if grant.library is not None and grant.library != roots.get(own):
                raise InvalidInput(
                    f"tokens file {path}: entry {n} opens the server's own namespace, whose "
                    "library is MEMO_ROOT; drop its 'library' or give it another namespace"
                )
            continue
        if grant.library is None:
            continue
        for key, root in roots.items():
            if key != grant.key and _nested(grant.library, root):
                whose = "MEMO_ROOT" if key == own else f"the library of namespace {_name(key)}"
                raise InvalidInput(
                    f"tokens file {path}: entry {n}'s library {grant.library} overlaps {whose} "
                    f"({root}); give each namespace a folder of its own, none inside another"
                )
        roots[grant.key] = grant.library


def _nested(a: Path, b: Path) -> bool:
    return a.is_relative_to(b) or b.is_relative_to(a)


def _name(key: Key) -> str:
    agent, user = key
    return f"{agent}:{user}" if user else agent
