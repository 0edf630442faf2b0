"""Errors as HTTP answers: one line, the right 4xx, and never a crashed server.

A core error (`TidelineError`) already names the input and the fix; it becomes `{"error": …}`
with 404 for a missing thing, 409 for a run already going on, 503 for a service that is not
there (embedder, LLM, a damaged database) and 400 for the rest. A request that does not match its
schema gets 422 with the fields named. The panel's pages get the same message in a page.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from tideline.consolidate import DreamBusy, SleepBusy
from tideline.errors import (
    DatabaseLocked,
    EmbedderUnavailable,
    LLMUnavailable,
    NotFound,
    StoreError,
    TidelineError,
)
from tideline.web._runs import RunBusy

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


def describe(exc: RequestValidationError) -> str:
    """`query parameter 'k': input should be ≥ 1 (got '0'); …` in one line."""
    parts = []
    for err in exc.errors():
        where, *path = [str(p) for p in err["loc"]] or ["request"]
        name = ".".join(path) or where
        if err["type"] == "missing":
            parts.append(f"missing {where} field {name!r}")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            msg = err["msg"][:1].lower() + err["msg"][1:]
            parts.append(f"{where} field {name!r}: {msg} (got {got})")
    return one_line("; ".join(parts) + "; see /api/openapi.json for the schema")


def install(app: FastAPI, page: Any) -> None:
    """Register the handlers; `page(request, status, message)` renders an error for the panel."""

    def answer(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api"):
            return JSONResponse({"error": message}, status_code=status)
        response: Response = page(request, status, message)
        return response

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
