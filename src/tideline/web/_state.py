"""What every route reaches: the app (`Tideline`, the composition root), the background runs,
and the guard and its login sessions (for the login form and CSRF). Routes call the app's
services directly: each service takes the lock it needs (the routes run in worker threads)."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from tideline.app import Tideline
from tideline.serve import HttpGuard
from tideline.web._background import Runs
from tideline.web._session import PanelSessions


@dataclass
class Web:
    app: Tideline
    runs: Runs
    sessions: PanelSessions  # the guard's, once the guard wraps the routes
    guard: HttpGuard | None = None  # set once the guard wraps the routes

    @property
    def tokens_on(self) -> bool:
        """Whether callers hold a token (a guard with tokens): then they see no server paths."""
        return bool(self.guard and self.guard.tokens)


def web(request: Request) -> Web:
    """The route dependency: this server's `Web`."""
    state: Web = request.app.state.web
    return state
