"""One HTTP app for `tideline serve --transport http`: the MCP endpoint (/mcp), the REST API
(/api, OpenAPI at /api/openapi.json) and the panel (/), in one process on one port.

The MCP endpoint's routes and its session manager's lifespan are the MCP driver's own
(`tideline.mcp.mcp_app`); this module puts them beside the API and panel routes and puts the one
guard (`tideline.mcp.HttpGuard`: Host, Origin, token) in front of all three. The panel may carry
the token in its login cookie; /login and /static need none. One server may answer for several
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
    HttpGuard,
    is_loopback,
    mcp_app,
    run_http,
    server_tokens,
)
from tideline.web import _errors, api, panel
from tideline.web._names import API, LOGIN, SESSION_COOKIE, STATIC
from tideline.web._namespaces import Namespaces
from tideline.web._runs import Runs
from tideline.web._state import Web


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
    root.include_router(api.router)
    root.include_router(panel.router)
    root.mount(STATIC, StaticFiles(directory=Path(__file__).parent / "static"), name="static")
    root.router.routes.extend(mcp.routes)
    _errors.install(root, panel.error_page)
    return root


def http_app(app: Tideline, host: str = DEFAULT_HOST) -> HttpGuard:
    """Each namespace's `web_app` behind the one guard: what `serve` runs. The guard lets in
    the server's own token (`token`) and the tokens file's (`tokens_file`), and each request
    reaches the app of its token's namespace (`Namespaces`); refuses a public `host` without a
    token and a bad tokens file."""
    tokens = server_tokens(app.settings, host)
    guard = HttpGuard(
        Namespaces(app, lambda opened: _guarded(web_app(opened, host), guard), tokens.library),
        tokens,
        check_host=is_loopback(host),
        cookie=SESSION_COOKIE,
        public=(LOGIN, STATIC),
        login=LOGIN,
    )
    return guard


def _guarded(root: FastAPI, guard: HttpGuard) -> FastAPI:
    root.state.web.guard = guard  # the login form checks tokens through it
    return root


def serve(app: Tideline, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> None:
    """Serve MCP, the API and the panel until interrupted."""
    run_http(http_app(app, host), app, host, port)
