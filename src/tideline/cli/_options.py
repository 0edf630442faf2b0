"""The CLI's reading of `tideline.fields`: typer options and arguments from the shared specs.

`k: int = option(MEMORY_SEARCH, "k", "-k")` takes the default, the `--k` spelling, the 1–200
range and the help from the spec; a field with choices needs its enum as the annotation
(`Mode = choice(MEMORY_SEARCH, "mode")`), which typer turns into a `click.Choice`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from enum import Enum, StrEnum
from functools import cache, wraps
from typing import Any, TypeVar, cast

import typer

from tideline.fields import Command, Field

F = TypeVar("F", bound=Callable[..., Any])

#: Context settings of a command whose positional argument is free text: `tideline search -word`
#: searches for "-word" instead of failing on an unknown option `-w`. A word that starts like a
#: real option (`-k…`, `--turns`) still needs `--` before it: `tideline search -- -kids`.
FREE_TEXT: dict[str, Any] = {"ignore_unknown_options": True}


def option(cmd: Command, name: str, *short: str) -> Any:
    """A `typer.Option` (or `Argument` for a positional field) built from `cmd`'s field `name`."""
    f = cmd.field(name)
    text = f"{f.help} Repeat {f.option} for more." if f.many else f.help
    if f.required:
        default: Any = ...
    elif f.many:
        default = []
    else:
        default = f.default
    if f.positional:
        return typer.Argument(default, help=text, min=f.ge, max=f.le)
    # a flag that is on by default needs its off switch: --turns/--no-turns
    spelled = f"{f.option}/--no-{f.option[2:]}" if default is True else f.option
    return typer.Option(default, spelled, *short, help=text, min=f.ge, max=f.le)


def choice(cmd: Command, name: str) -> type[StrEnum]:
    """The enum of a field's choices, the annotation typer needs to offer and check them."""
    return _enum(cmd.field(name).choices)


@cache
def _enum(choices: tuple[str, ...]) -> type[StrEnum]:
    return cast(type[StrEnum], StrEnum("Choice", [(c, c) for c in choices]))


def takes(cmd: Command, short: Mapping[str, str] | None = None) -> Callable[[F], F]:
    """A command whose arguments are `cmd`'s fields, in the spec's order and before the
    function's own options (`--root`, `--json`): the function takes them as `**args`, each a
    plain value (a choice as its text, not typer's enum), and hands them to the service as they
    are, so a field added to the spec needs no edit here. `short`: a field's short spelling
    (`{"k": "-k"}`)."""
    shorts = short or {}

    def spelled(fn: F) -> F:
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        fields = [
            inspect.Parameter(
                f.name,
                kind,
                default=option(cmd, f.name, *filter(None, [shorts.get(f.name)])),
                annotation=_annotation(cmd, f),
            )
            for f in cmd.fields
        ]
        own = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind is not inspect.Parameter.VAR_KEYWORD
        ]

        @wraps(fn)
        def plain(**given: Any) -> Any:
            return fn(**{name: _plain(value) for name, value in given.items()})

        plain.__dict__["__signature__"] = inspect.Signature([*fields, *own], return_annotation=None)
        return cast(F, plain)

    return spelled


def _plain(value: Any) -> Any:
    """A choice typer read as its enum, as the text it stands for (also in a list)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _annotation(cmd: Command, f: Field) -> Any:
    """What typer reads a field's values as: its choices' enum, its type, a list of either."""
    kind: Any = choice(cmd, f.name) if f.choices else f.kind
    return list[kind] if f.many else kind
