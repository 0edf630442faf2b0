"""One HTTP app for `tideline serve --transport http`: the MCP endpoint (/mcp), the REST API
(/api, OpenAPI at /api/openapi.json) and the panel (/), in one process on one port.

The MCP endpoint's routes and its session manager's lifespan are the MCP driver's own
(`tideline.mcp.mcp_app`); this module puts them beside the API and panel routes and puts the one
guard (`tideline.mcp.HttpGuard`: Host, Origin, token, body size) in front of all three. The
panel's browser may carry a login session instead of the token (`_session`); /login and /static
need none. One server may answer for several
namespaces: each token opens its own (`tideline.mcp.Tokens`), served by that namespace's app.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from tideline import __version__
from tideline.app import Tideline
from tideline.mcp import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    MCP_PATH,
    HttpGuard,
    is_loopback,
    mcp_app,
    run_http,
    server_tokens,
)
from tideline.web import _errors, api, panel, reference
from tideline.web._limits import body_limit
from tideline.web._names import API, API_DOCS, FAVICON, LOGIN, STATIC
from tideline.web._namespaces import Namespaces
from tideline.web._runs import Runs
from tideline.web._session import PanelSessions
from tideline.web._state import Web

#: What `serve` says it serves, and where.
PATHS = (
    ("panel", "/"),
    ("MCP", MCP_PATH),
    ("REST API", API),
    ("API reference", API_DOCS),
)


def web_app(app: Tideline, host: str = DEFAULT_HOST) -> FastAPI:
    """The API, the panel and the MCP routes, unguarded (tests call it through `http_app`)."""
    mcp = mcp_app(app, host)
    state = Web(app, Runs())

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        async with mcp.router.lifespan_context(mcp):
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
    root.router.routes.extend(mcp.routes)
    _errors.install(root, panel.error_page)
    return root


def http_app(
    app: Tideline, host: str = DEFAULT_HOST, sessions: PanelSessions | None = None
) -> HttpGuard:
    """Each namespace's `web_app` behind the one guard: what `serve` runs. The guard lets in
    the server's own token (`token`) and the tokens file's (`tokens_file`), and the panel's
    login sessions (`sessions`, by default new ones with this server's own secret); each request
    reaches the app of its token's namespace (`Namespaces`). Refuses a public `host` without a
    token and a bad tokens file."""
    tokens = server_tokens(app.settings, host)
    if sessions is None:
        sessions = PanelSessions(app.settings.panel_session_hours, tokens.keys)
    guard = HttpGuard(
        Namespaces(
            app, lambda opened: _guarded(web_app(opened, host), guard, sessions), tokens.library
        ),
        tokens,
        check_host=is_loopback(host),
        sessions=sessions,
        public=(LOGIN, STATIC, FAVICON),
        login=LOGIN,
        body_limit=body_limit,
    )
    return guard


def _guarded(root: FastAPI, guard: HttpGuard, sessions: PanelSessions) -> FastAPI:
    root.state.web.guard = guard  # the login form checks tokens through it
    root.state.web.sessions = sessions  # and issues sessions, and pages sign CSRF tokens, here
    return root


def serve(app: Tideline, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve MCP, the API and the panel until interrupted."""
    run_http(http_app(app, host), app, host, port, PATHS)
