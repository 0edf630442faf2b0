"""The drivers' reading of `tideline.fields`: pydantic-annotated argument types (the MCP tools'
arguments, the REST API's request models).

`K = annotated(MEMORY_SEARCH, "k")` is `Annotated[int, Field(default=10, ge=1, le=200,
description=…)]`; a tool declares `k: K` with no default of its own, so the schema's default,
bounds and description all come from the spec (the tool modules use `from __future__ import
annotations`, hence module-level aliases).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field as Schema

from tideline.fields import NO_ITEMS, Command


def annotated(cmd: Command, name: str) -> Any:
    """`Annotated[type, pydantic.Field(...)]` for `cmd`'s field `name`."""
    f = cmd.field(name)
    kind: Any = Literal[f.choices] if f.choices else f.kind
    description = f.help
    bounds: dict[str, Any] = {"ge": f.ge, "le": f.le}
    if f.many:
        if f.ge is not None or f.le is not None:  # the bounds hold for each item (ids)
            kind = Annotated[kind, Schema(**bounds)]
            bounds = {}
        kind = list[kind] | str if f.kind is str else list[kind]
        if f.kind is str:
            description += " A list, or one string 'a, b'."
    extra: dict[str, Any] = {}
    if not f.required:
        extra["default"] = None if f.default in (None, NO_ITEMS) else f.default
        if extra["default"] is None:
            kind = kind | None
    return Annotated[kind, Schema(description=description, **bounds, **extra)]
