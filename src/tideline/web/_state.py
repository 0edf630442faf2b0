"""What every route reaches: the app (`Tideline`, the composition root), the background runs,
the guard and its login sessions (for the login form and CSRF), and `call`, which runs one core call under the lock it needs."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Literal, TypeVar

from fastapi import Request

from tideline.app import Tideline
from tideline.serve import HttpGuard
from tideline.web._runs import Runs
from tideline.web._session import PanelSessions

T = TypeVar("T")
Lock = Literal["agent", "library"] | None


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

    def call(self, fn: Callable[[], T], lock: Lock = "agent") -> T:
        """`fn()` under the app's database lock ("agent"), its library lock, or none (None: the
        service locks for itself, as `Memory` does, so embedding never blocks other clients).
        The same locks as the MCP tools: both drivers share one app in one process."""
        guard: AbstractContextManager[object] = nullcontext()
        if lock == "agent":
            guard = self.app.db_lock
        elif lock == "library":
            guard = self.app.library_lock
        with guard:
            return fn()


def web(request: Request) -> Web:
    """The route dependency: this server's `Web`."""
    state: Web = request.app.state.web
    return state
