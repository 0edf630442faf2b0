"""The MCP server: one `MCPServer` with every Tideline tool, served over stdio or streamable HTTP.

The server only maps. Arguments arrive as JSON, are checked against each tool's schema (after
renaming the synonyms models like to use, `limit` for `k`), and go to the core API; core errors
(`TidelineError`) and schema violations come back as tool errors (`isError`) with a one-line
message that says what to call next. A crash is logged with its traceback and returned as a tool
error too, so one bad call never takes the server down.
"""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from tideline import __version__
from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import InvalidInput
from tideline.library import MAX_FILE_BYTES
from tideline.mcp import (
    analysis_tools,
    dream_tools,
    inject_tools,
    library_tools,
    memory_tools,
    profile_tools,
)
from tideline.mcp._base import ToolServer
from tideline.mcp._body import KIB
from tideline.mcp._exit_sleep import start_exit_sleep
from tideline.mcp._guard import HttpGuard, is_loopback
from tideline.mcp._tokens import Grant, Key, Tokens, read_tokens_file

log = logging.getLogger("tideline.mcp")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
#: The largest JSON-RPC message a client may send: the largest tool argument is a note for
#: `memo_write` (MAX_FILE_BYTES), and JSON may spell one byte of it as six (`\u0001`).
MCP_BODY_LIMIT = 6 * MAX_FILE_BYTES + 64 * KIB


def build_server(app: Tideline, *, remote: bool = False) -> ToolServer:
    """All tools on one server: memory, script layer, injection, the library, the profile and
    dreaming (with the dream prompts). `remote` (MCP over HTTP): errors hide the server's paths."""
    agent = app.settings.agent_name
    server = ToolServer(
        app,
        remote=remote,
        name="tideline",
        version=__version__,  # serverInfo.version in the initialize result
        title=f"Tideline — {agent}'s memory",
        instructions=(
            f"This server is {agent}'s long-term memory. Call memory_search before answering "
            "anything about the past or the user; call sync_turn for every conversation turn so "
            "the raw context is kept; call memory_write when something is worth remembering; "
            "call memory_trace to read the conversation behind a memory."
        ),
        log_level="INFO",
    )
    for tools in (
        memory_tools,
        analysis_tools,
        inject_tools,
        library_tools,
        profile_tools,
        dream_tools,
    ):
        tools.register(server)
    return server


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


def mcp_app(app: Tideline, host: str = DEFAULT_HOST) -> Starlette:
    """The MCP endpoint at /mcp with its session manager's lifespan, unguarded: `http_app` puts
    the guard in front (and refuses a public `host` without a token), and `tideline.web` mounts
    its routes beside the REST API and the panel."""
    # HttpGuard checks Host and Origin with one loopback rule; the SDK's exact lists refused
    # loopback names the docs allow (127.0.0.2, a.localhost, a Host without a port).
    return build_server(app, remote=True).streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def http_app(app: Tideline, host: str = DEFAULT_HOST) -> HttpGuard:
    """The MCP endpoint alone behind the guard (the app's `token` setting, Origin, and Host on a
    loopback bind): one namespace, so the tokens file is not read."""
    tokens = server_tokens(app.settings, host, file=False)
    return HttpGuard(
        mcp_app(app, host),
        tokens,
        check_host=is_loopback(host),
        body_limit=lambda _method, _path: MCP_BODY_LIMIT,
    )


def serve_stdio(app: Tideline) -> None:
    """Serve over stdio until the client closes stdin, then start a sleep when
    `sleep_on_exit` is set."""
    anyio.run(build_server(app).run_stdio_async)
    if app.settings.sleep_on_exit:  # the client closed stdin: the agent session ended
        start_exit_sleep(app.settings)


def run_http(
    guard: HttpGuard,
    app: Tideline,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    paths: Sequence[tuple[str, str]] = (("MCP", MCP_PATH),),
) -> None:
    """Run a guarded HTTP app (`http_app`, or the web panel with MCP mounted) until
    interrupted; once the port is bound, say on stderr where each of `paths` is."""
    sock = _bind(host, port)
    config = uvicorn.Config(guard, host=host, port=port, log_level="warning", lifespan="on")
    # the SDK's "session manager started/shutting down" is noise on a person's terminal
    logging.getLogger("mcp.server.streamable_http_manager").setLevel(logging.WARNING)
    print(announce(guard, app, host, sock.getsockname()[1], paths), file=sys.stderr, flush=True)
    try:
        anyio.run(uvicorn.Server(config).serve, [sock])
    finally:
        sock.close()


def announce(
    guard: HttpGuard, app: Tideline, host: str, port: int, paths: Sequence[tuple[str, str]]
) -> str:
    """What `serve` prints when it listens: whose memory, each path's URL, the token rule."""
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    spaces = sorted(f"{agent}:{user}" if user else agent for agent, user in guard.tokens.keys)
    whose = f"namespaces {', '.join(spaces)}" if spaces else f"{app.settings.agent_name}'s memory"
    width = max(len(name) for name, _ in paths)
    lines = [f"Tideline is serving {whose} on {base}"]
    lines += [f"  {name:<{width}}  {base}{path}" for name, path in paths]
    if guard.tokens:
        lines.append(f"  {'token':<{width}}  required: send 'Authorization: Bearer <token>'")
    else:
        lines.append(f"  {'token':<{width}}  none (loopback only)")
    lines.append("Stop it with Ctrl-C.")
    return "\n".join(lines)


def _bind(host: str, port: int) -> socket.socket:
    """Bind before starting uvicorn so a busy port is a clear error, not a log line and exit 1."""
    sock: socket.socket | None = None
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)  # clients that connect before uvicorn accepts wait in the backlog
    except OSError as exc:
        if sock is not None:
            sock.close()
        raise InvalidInput(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
            "choose another --port or stop the process using it"
        ) from None
    sock.set_inheritable(True)
    return sock
