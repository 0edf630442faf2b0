"""One server, several namespaces: each namespace's own app (API, panel, MCP), picked per request.

The guard in front resolves a request's token (or panel cookie) to a namespace and puts it on
the request (`tideline.serve.NAMESPACE`); this ASGI app hands the request to that namespace's web
app. A namespace's `Tideline` is opened on its first request (on SQLite the agent's own database
file, on PostgreSQL its schema; its library root the tokens file's, or none; the embedder is
shared), kept, and closed when the server stops.
Each namespace app's lifespan (the MCP session manager) runs in one task group for as long as
the server's lifespan does. A request without a namespace (no token configured, or a public
path such as the login form) goes to the server's own namespace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from fastapi import FastAPI
from starlette.types import Receive, Scope, Send

from tideline.app import Tideline
from tideline.serve import NAMESPACE, Key, own_key

log = logging.getLogger("tideline.web")


class Namespaces:
    """The ASGI app behind the guard (see the module docstring)."""

    def __init__(
        self,
        home: Tideline,
        build: Callable[[Tideline], FastAPI],
        libraries: Callable[[Key], Path | None] = lambda _: None,
    ) -> None:
        self.home = home
        self._libraries = libraries
        self._build = build
        self._apps: dict[Key, FastAPI] = {}
        self._opened: list[Tideline] = []  # the server's own app is its caller's to close
        self._lock: anyio.Lock | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._stop: anyio.Event | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        app = await self.app_for(scope.get(NAMESPACE) or own_key(self.home.settings))
        await app(scope, receive, send)

    async def app_for(self, key: Key) -> FastAPI:
        """The namespace's web app: opened and started on first use, then the same one."""
        found = self._apps.get(key)
        if found is not None:  # the common case takes no lock
            return found
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # one opening at a time: no namespace is opened twice
            found = self._apps.get(key)
            if found is None:
                found = self._build(await anyio.to_thread.run_sync(self._open, key))
                if self._group is not None:  # without a lifespan (a bare test client): routes only
                    await self._group.start(self._run, found)
                self._apps[key] = found
        return found

    def _open(self, key: Key) -> Tideline:
        if key == own_key(self.home.settings):
            return self.home
        agent, user = key
        log.info("opening namespace %s%s", agent, f":{user}" if user else "")
        # its own library (or none), one embedder for every namespace (the same model, loaded once)
        settings = self.home.settings.for_namespace(agent, user, self._libraries(key))
        opened = Tideline(settings, self.home.embedder)
        self._opened.append(opened)
        return opened

    async def _run(self, app: FastAPI, *, task_status: Any) -> None:
        """A namespace app's lifespan, from its start until the server stops."""
        assert self._stop is not None
        async with app.router.lifespan_context(app):
            task_status.started()
            await self._stop.wait()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        try:
            async with anyio.create_task_group() as group:
                self._group, self._stop = group, anyio.Event()
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
                self._stop.set()
        finally:
            self._group = None
            self.close()
        await send({"type": "lifespan.shutdown.complete"})

    def close(self) -> None:
        """Close the namespaces this opened (not the server's own)."""
        while self._opened:
            self._opened.pop().close()
        self._apps.clear()
