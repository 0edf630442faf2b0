"""An endpoint another driver serves beside the web's routes on the same port (the MCP endpoint):
what `serve` is handed so the web driver never imports the driver that builds it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.applications import Starlette

from tideline.app import Tideline


@dataclass(frozen=True)
class Endpoint:
    """`build(app, host)` gives the endpoint's routes (and their lifespan) for one namespace's
    app; `path` is where they answer, `body_limit` the largest request body they take, `name`
    what `serve` calls it when it says where everything is."""

    name: str
    path: str
    body_limit: int
    build: Callable[[Tideline, str], Starlette]
