"""Errors as HTTP answers: one line, the right 4xx, and never a crashed server.

A core error (`TidelineError`) already names the input and the fix; it becomes `{"error": …}`
with 404 for a missing thing, 409 for a run already going on, 503 for a service that is not
there (embedder, LLM, a damaged database) and 400 for the rest. A request that does not match its
schema gets 422 with the fields named. The panel's pages get the same message in a page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from tideline.errors import (
    DatabaseLocked,
    DreamBusy,
    EmbedderUnavailable,
    LLMUnavailable,
    NotFound,
    RunBusy,
    SleepBusy,
    StoreError,
    TidelineError,
)
from tideline.pathnames import hide_paths

log = logging.getLogger("tideline.web")

STATUS: tuple[tuple[type[TidelineError], int], ...] = (
    (NotFound, 404),
    (RunBusy, 409),
    (SleepBusy, 409),
    (DreamBusy, 409),
    (DatabaseLocked, 409),
    (EmbedderUnavailable, 503),
    (LLMUnavailable, 503),
    (StoreError, 503),
)


def status_of(exc: TidelineError) -> int:
    return next((code for kind, code in STATUS if isinstance(exc, kind)), 400)


def one_line(text: str) -> str:
    return " ".join(text.split())


REFERENCE = "see /api/docs for each route's fields"


def describe(exc: RequestValidationError) -> str:
    """`query field 'k': input should be greater than or equal to 1 (got '0'); …` in one line;
    a body that is not JSON, not an object or missing says so in words."""
    parts = []
    for err in exc.errors():
        where, *path = [str(p) for p in err["loc"]] or ["request"]
        name = ".".join(path) or where
        if err["type"] == "json_invalid":
            why = err.get("ctx", {}).get("error", "")
            at = f" at character {path[0]}" if path else ""
            parts.append(f"the request body is not valid JSON ({why}{at}); send one JSON object")
        elif where == "body" and not path and err["type"] == "missing":
            parts.append("the request has no body; send a JSON object")
        elif where == "body" and not path:
            got = "a body not sent as JSON" if isinstance(err.get("input"), bytes) else _got(err)
            parts.append(
                f"the request body must be a JSON object ({{…}}), got {got}; send it with "
                "Content-Type: application/json"
            )
        elif err["type"] == "missing":
            parts.append(f"missing {where} field {name!r}")
        else:
            parts.append(f"{where} field {name!r}: {_sentence(err['msg'])} (got {_got(err)})")
    return one_line("; ".join(parts) + f"; {REFERENCE}")


def _got(err: dict[str, Any]) -> str:
    got = repr(err.get("input"))
    return got if len(got) <= 60 else got[:57] + "..."


def _sentence(msg: str) -> str:
    """`Input should be …` → `input should be …`; `JSON …` stays `JSON …`."""
    return msg if msg[1:2].isupper() else msg[:1].lower() + msg[1:]


def install(app: FastAPI, page: Callable[[Request, int, str], Response]) -> None:
    """Register the handlers; `page(request, status, message)` renders an error for the panel."""

    def answer(request: Request, status: int, message: str) -> Response:
        """The error in one line, the server's paths hidden: whoever sent the request may hold
        only a token and must not learn where the server keeps its files."""
        message = hide_paths(message, request.app.state.web.app.private_paths())
        if request.url.path.startswith("/api"):
            return JSONResponse({"error": message}, status_code=status)
        return page(request, status, message)

    @app.exception_handler(TidelineError)
    async def core_error(request: Request, exc: TidelineError) -> Response:
        return answer(request, status_of(exc), one_line(str(exc)))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        return answer(request, 422, describe(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return answer(request, exc.status_code, one_line(str(exc.detail)))

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> Response:
        log.error("%s %s crashed", request.method, request.url.path, exc_info=exc)
        return answer(
            request,
            500,
            f"{request.url.path} failed with an unexpected {type(exc).__name__}; the server "
            "logged it and is still running",
        )
