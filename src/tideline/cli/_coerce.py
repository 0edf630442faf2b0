"""Command-line values to Python without pydantic, where that is plain: text, a whole number, a
number, one of the choices, and repeated options of those.

typer 0.29 turns each value through a pydantic `TypeAdapter` built for its parameter on first
use: importing pydantic and building a `tideline search`'s dozen adapters was about a tenth of
the command's start-up (issue 34: a CLI search within 0.8 s of process start). `quick` gives a
parameter a converter that takes what is plainly valid ("12" for a 1–200 number, "lex" for a
mode) straight to its value, and hands anything else to typer's own adapter, so every error
message, and any value a rule here does not cover, is typer's (`tests/cli/test_coerce.py`
checks both agree on valid and invalid input).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, get_args, get_origin

from typer._coercion import RuntimeParam, build_runtime_param

if TYPE_CHECKING:
    from typer._click import Context
    from typer._coercion import TypeDescriptor
    from typer.core import _TyperParameter

#: Not plainly valid: typer's adapter decides.
_MISS: Any = object()
_WHOLE = re.compile(r"-?[1-9][0-9]{0,17}|0")
_DECIMAL = re.compile(r"-?(?:[1-9][0-9]{0,17}|0)(?:\.[0-9]{1,17})?")


def _plain(kind: Any, low: float | None, high: float | None, value: Any) -> Any:
    """`value` as `kind` when it is plainly valid; `_MISS` otherwise (typer decides)."""
    if kind is str:
        return value if isinstance(value, str) else _MISS
    number: float
    if type(value) is int and kind in (int, float):  # a default
        number = kind(value)
    elif type(value) is float and kind is float:
        number = value
    elif not isinstance(value, str):
        return _MISS
    elif kind is int and _WHOLE.fullmatch(value):
        number = int(value)
    elif kind is float and _DECIMAL.fullmatch(value):
        number = float(value)
    elif isinstance(kind, type) and issubclass(kind, Enum):
        return next((c for c in kind if c.value == value), _MISS)
    else:
        return _MISS
    if (low is not None and number < low) or (high is not None and number > high):
        return _MISS
    return number


@dataclass(frozen=True)
class Quick(RuntimeParam):
    """A parameter's converter: the plain cases here, the rest by typer's (built when needed)."""

    descriptor: TypeDescriptor

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        if ctx.token_normalize_func is None:  # with one, choices are compared normalised
            done = self._plain(self.annotation, value)
            if done is not _MISS:
                return done
        return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    def _plain(self, kind: Any, value: Any) -> Any:
        info = self.parameter_info
        if get_origin(kind) is None:
            return _plain(kind, info.min, info.max, value)
        if get_origin(kind) is list and isinstance(value, list | tuple):
            (kind,) = get_args(kind)
            done = [_plain(kind, info.min, info.max, v) for v in value]
            return _MISS if any(d is _MISS for d in done) else done
        return _MISS


def runtime_param(param: _TyperParameter) -> RuntimeParam:
    """`param`'s converter, made on first use: the `get_runtime_param` of the CLI's parameter
    classes (`cli._help`)."""
    if param._runtime_param is None:
        param._runtime_param = quick(param.type_descriptor)
    return param._runtime_param


def quick(descriptor: TypeDescriptor) -> RuntimeParam:
    """The converter of a parameter typer describes by `descriptor` (see the module docstring)."""
    info = descriptor.parameter_info
    if (
        descriptor.is_file
        or info.parser is not None
        or info.clamp
        or not info.case_sensitive
        or descriptor.is_path
    ):
        return build_runtime_param(descriptor)
    return Quick(info, descriptor.annotation, descriptor)
