"""Command-line values convert without pydantic where they are plain (`cli._coerce`), and to
exactly what typer's own pydantic adapters make of them: the same value, or the same error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param
from typer.core import TyperArgument, TyperOption

from tideline.cli._coerce import Quick, quick
from tideline.cli.main import app as tideline_app
from tideline.cli.memo import app as memo_app

#: What people type (and a few they should not): numbers in and out of bounds, choices,
#: forms pydantic reads its own way (leading zeros, exponents, spaces, underscores).
TYPED = [
    "12", "1", "0", "-3", "200", "201", "0.5", "1.5", "-0.25", "1e3", "007", "-0", " 5",
    "1_000", "9" * 19, "abc", "", "hybrid", "lex", "vec", "HYBRID", "turn", "narrative",
    "2026-05-01", "Lisbon trip",
]  # fmt: skip


def parameters() -> Iterator[tuple[str, Any, Any]]:
    """(path, command, parameter) for every parameter of every command of both programs."""
    for program, app in (("tideline", tideline_app), ("memo", memo_app)):

        def walk(command: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
            for p in command.params:
                if isinstance(p, TyperOption | TyperArgument) and p.name != "help":
                    yield f"{path} {p.name}", command, p
            for name, sub in getattr(command, "commands", {}).items():
                yield from walk(sub, f"{path} {name}")

        yield from walk(typer.main.get_command(app), program)


EVERY = list(parameters())


def outcome(convert: Any, value: Any, param: Any, ctx: Context) -> tuple[str, Any]:
    try:
        return "value", convert(value, param=param, ctx=ctx)
    except BadParameter as exc:
        return "error", exc.format_message()


@pytest.mark.parametrize(("path", "command", "param"), EVERY, ids=[e[0] for e in EVERY])
def test_each_parameter_converts_as_typer_would(path: str, command: Any, param: Any) -> None:
    ctx = Context(command)
    ours = quick(param.type_descriptor)
    theirs = build_runtime_param(param.type_descriptor)
    many = param.multiple or param.nargs == -1
    samples: list[Any] = [(v,) if many else v for v in TYPED]
    if many:
        samples += [("12", "abc"), ("1", "2"), ()]
    samples.append(param.default if not many else tuple(param.default or ()))
    for value in samples:
        got, want = (
            outcome(ours.coerce, value, param, ctx),
            outcome(theirs.coerce, value, param, ctx),
        )
        assert got == want, (path, value)
        assert type(got[1]) is type(want[1]), (path, value)


def test_plain_values_of_a_search_never_reach_pydantic() -> None:
    """The point of it: `-k 12`, `--mode lex`, `--min-score 0.2` and the defaults convert here
    (a value typer would have to judge goes to typer, and its error is typer's)."""
    search = typer.main.get_command(tideline_app).commands["search"]  # type: ignore[attr-defined]
    ctx = Context(search)
    plain = {"k": "12", "mode": "lex", "min_score": "0.2", "query": "Lisbon trip", "tags": ("a",)}
    for p in search.params:
        if p.name in plain:
            runtime = quick(p.type_descriptor)
            assert isinstance(runtime, Quick)
            assert runtime.coerce(plain[p.name], param=p, ctx=ctx) is not None
    k = next(p for p in search.params if p.name == "k")
    with pytest.raises(BadParameter, match="less than or equal to 200"):
        quick(k.type_descriptor).coerce("201", param=k, ctx=ctx)
