"""Listening on HTTP: bind first (a busy port is a one-line error), say where everything is, then
run the guarded app with uvicorn until interrupted; and the `Endpoint` another driver serves beside
the web's routes on the same port (the MCP endpoint): what `serve` is handed so the web driver
never imports the driver that builds it."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio
import uvicorn
from starlette.applications import Starlette

from tideline.app import Tideline
from tideline.errors import InvalidInput
from tideline.serve._guard import HttpGuard

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


@dataclass(frozen=True)
class Endpoint:
    """`build(app, host)` gives the endpoint's routes (and their lifespan) for one namespace's
    app; `path` is where they answer, `body_limit` the largest request body they take, `name`
    what `serve` calls it when it says where everything is."""

    name: str
    path: str
    body_limit: int
    build: Callable[[Tideline, str], Starlette]


def run_http(
    guard: HttpGuard,
    app: Tideline,
    paths: Sequence[tuple[str, str]],
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
) -> None:
    """Run a guarded HTTP app (the web panel with the MCP endpoint beside it) until
    interrupted; once the port is bound, say on stderr where each of `paths` (name, path) is."""
    sock = _bind(host, port)
    config = uvicorn.Config(guard, host=host, port=port, log_level="warning", lifespan="on")
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
