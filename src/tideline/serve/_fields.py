"""The drivers' reading of `tideline.fields`: pydantic-annotated argument types (the MCP tools'
arguments, the REST API's request models) and a command as a function tool (the Hermes
provider's tools: their schemas, their arguments checked).

`K = annotated(MEMORY_SEARCH, "k")` is `Annotated[int, Field(default=10, ge=1, le=200,
description=…)]`; a tool declares `k: K` with no default of its own, so the schema's default,
bounds and description all come from the spec (the tool modules use `from __future__ import
annotations`, hence module-level aliases).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic import Field as Schema

from tideline.errors import InvalidInput
from tideline.fields import NO_ITEMS, Command
from tideline.serve._tool_errors import describe_validation


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


@cache
def command_model(cmd: Command, *skip: str) -> type[BaseModel]:
    """The arguments of `cmd` (less `skip`, which a REST route takes from its path) as a model
    that refuses unknown names: what the REST API validates and a tool schema is made from."""
    name = "".join(
        part.title() for part in (cmd.tool or cmd.cli or "request").replace(" ", "_").split("_")
    )
    fields = {f.name: annotated(cmd, f.name) for f in cmd.fields if f.name not in skip}
    model: type[BaseModel] = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
    return model


def tool_schema(cmd: Command, description: str) -> dict[str, Any]:
    """`cmd` as a function tool in the OpenAI format (`name`, `description`, `parameters`), its
    parameters' bounds, defaults, choices and descriptions from the spec."""
    assert cmd.tool is not None, "only a command with a tool name is a tool"
    return {
        "name": cmd.tool,
        "description": description,
        "parameters": _untitled(command_model(cmd).model_json_schema()),
    }


def tool_arguments(cmd: Command, given: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call's arguments checked against `cmd`: the synonyms models use renamed (the real
    name wins), every argument given a value; anything else is one `InvalidInput` line."""
    tool = cmd.tool or cmd.cli or "the tool"
    known = {f.name for f in cmd.fields}
    arguments = dict(given)
    for alias, target in cmd.aliases.items():
        if alias in arguments and alias not in known:
            arguments.setdefault(target, arguments.pop(alias))
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise InvalidInput(
            f"{tool} has no argument {', '.join(map(repr, unknown))}; "
            f"its arguments are: {', '.join(sorted(known))}"
        )
    try:
        return command_model(cmd).model_validate(arguments).model_dump()
    except ValidationError as exc:
        raise InvalidInput(describe_validation(tool, exc)) from None


def _untitled(schema: Any) -> Any:
    """A JSON schema without pydantic's generated `title`s (noise in every tool list a model
    reads); a property that is named "title" stays."""
    if isinstance(schema, dict):
        return {
            k: (_untitled(v) if k != "properties" else {p: _untitled(s) for p, s in v.items()})
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema
