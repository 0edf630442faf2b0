"""One HTTP app for `tideline serve --transport http`: the MCP endpoint (/mcp), the REST API
(/api, OpenAPI at /api/openapi.json) and the panel (/), in one process on one port.

The MCP endpoint's routes and its session manager's lifespan are the MCP driver's own: `serve`
hands them in as an `Endpoint` (`tideline.mcp.MCP_ENDPOINT`; this driver never imports that
one). This module puts each endpoint's routes beside the API and panel routes and puts the one
guard (`tideline.serve.HttpGuard`: Host, Origin, token, body size) in front of all of them. The
panel's browser may carry a login session instead of the token (`_session`); /login and /static
need none. One server may answer for several
namespaces: each token opens its own (`tideline.serve.Tokens`), served by that namespace's app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from tideline import __version__
from tideline.app import Tideline
from tideline.clock import epoch_seconds
from tideline.serve import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    Endpoint,
    HttpGuard,
    Key,
    Throttle,
    is_loopback,
    run_http,
    server_tokens,
)
from tideline.web import _http_errors, api, panel, reference
from tideline.web._background import Runs
from tideline.web._namespaces import Namespaces
from tideline.web._private import Private
from tideline.web._routes import API, API_DOCS, FAVICON, LOGIN, STATIC, body_limits
from tideline.web._session import PanelSessions
from tideline.web._state import Web


def paths(endpoints: Sequence[Endpoint]) -> list[tuple[str, str]]:
    """What `serve` says it serves, and where: the panel, each endpoint beside it, the API."""
    return [("panel", "/"), *((e.name, e.path) for e in endpoints),
            ("REST API", API), ("API reference", API_DOCS)]  # fmt: skip


def web_app(
    app: Tideline, host: str = DEFAULT_HOST, *, endpoints: Sequence[Endpoint] = ()
) -> FastAPI:
    """The API, the panel and each endpoint's routes (MCP), unguarded (tests call it through
    `http_app`)."""
    beside = [endpoint.build(app, host) for endpoint in endpoints]
    state = Web(app, Runs(app.clock), new_sessions(app.settings.panel_session_hours))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for routes in beside:
                await stack.enter_async_context(routes.router.lifespan_context(routes))
            yield

    root = FastAPI(
        title=f"Tideline — {app.settings.agent_name}'s memory",
        version=__version__,
        openapi_url=f"{API}/openapi.json",
        docs_url=None,  # the stock docs pages load scripts from a CDN; the panel works offline
        redoc_url=None,
        lifespan=lifespan,
    )
    root.state.web = state
    root.include_router(reference.router)  # /api and /api/docs, before the API's own routes
    root.include_router(api.router)
    root.include_router(panel.router)
    root.mount(STATIC, StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    for routes in beside:
        root.router.routes.extend(routes.routes)
    _http_errors.install(root, panel.error_page)
    root.add_middleware(Private)  # never cached, never framed (`_private`)
    return root


def http_app(
    app: Tideline,
    host: str = DEFAULT_HOST,
    sessions: PanelSessions | None = None,
    *,
    endpoints: Sequence[Endpoint] = (),
) -> HttpGuard:
    """Each namespace's `web_app` (with `endpoints` beside it) behind the one guard: what
    `serve` runs. The guard lets in the server's own token (`token`) and the tokens file's
    (`tokens_file`), and the panel's login sessions (`sessions`, by default new ones with this
    server's own secret); each request reaches the app of its token's namespace (`Namespaces`).
    Refuses a public `host` without a token and a bad tokens file."""
    tokens = server_tokens(app.settings, host)
    if sessions is None:
        sessions = new_sessions(app.settings.panel_session_hours, tokens.keys)

    def opened_app(opened: Tideline) -> FastAPI:
        return _guarded(web_app(opened, host, endpoints=endpoints), guard, sessions)

    guard = HttpGuard(
        Namespaces(app, opened_app, tokens.library),
        tokens,
        check_host=is_loopback(host),
        sessions=sessions,
        public=(LOGIN, STATIC, FAVICON),
        login=LOGIN,
        body_limit=body_limits(endpoints),
        throttle=Throttle(app.clock),
    )
    return guard


def new_sessions(hours: float, keys: Collection[Key] | None = None) -> PanelSessions:
    """Panel logins of `hours`, by the machine's clock (a login ends in real time), for the
    namespaces `keys` (None: any)."""
    return PanelSessions(hours, keys, epoch_seconds)


def _guarded(root: FastAPI, guard: HttpGuard, sessions: PanelSessions) -> FastAPI:
    root.state.web.guard = guard  # the login form checks tokens through it
    root.state.web.sessions = sessions  # and issues sessions, and pages sign CSRF tokens, here
    return root


def serve(
    app: Tideline,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    endpoints: Sequence[Endpoint] = (),
) -> None:
    """Serve the API, the panel and `endpoints` (MCP) until interrupted."""
    guard = http_app(app, host, endpoints=endpoints)
    run_http(guard, app, paths(endpoints), host, port)
