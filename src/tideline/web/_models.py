"""Request models from `tideline.fields`: one pydantic model per command, so a bound, default or
choice of `/api/search?k=` is the one of `tideline search -k` and `memory_search(k=…)`.

A route takes a command's arguments as `Annotated[Args, Depends(query(CMD))]` (or `body(CMD)`):
the dependency's signature carries the command's model, so FastAPI validates and documents it
as if the route declared it, and the route gets the validated arguments as a dict."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Body, Path, Query
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from tideline.fields import Command
from tideline.serve import command_model
from tideline.store import MAX_ID

#: A record id in a path (`/api/facts/{id}`, `/facts/{id}`, …): the bounds of `fields.id_field`,
#: so `/facts/9223372036854775808` is a one-line 422, never an `OverflowError` (#21).
RecordId = Annotated[int, Path(ge=1, le=MAX_ID)]

#: A command's validated arguments by name: its fields' types are `tideline.fields`' (declared
#: once there), so they are only known when the route is built.
Args = dict[str, Any]


class _Reader:
    """A dependency that takes a command's model from the query or the body (`source`): its
    signature is the route parameter FastAPI validates and documents."""

    def __init__(self, model: type[BaseModel], source: FieldInfo) -> None:
        param = inspect.Parameter(
            "given", inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[model, source]
        )
        self.__signature__ = inspect.Signature([param], return_annotation=Args)

    def __call__(self, given: BaseModel) -> Args:
        return given.model_dump()


def query(cmd: Command, *skip: str) -> Callable[..., Args]:
    """`cmd`'s arguments from the query string (less `skip`, taken from the path)."""
    return _Reader(command_model(cmd, *skip), Query())


def body(cmd: Command, *skip: str) -> Callable[..., Args]:
    """`cmd`'s arguments from the JSON body (less `skip`, taken from the path)."""
    return _Reader(command_model(cmd, *skip), Body())
