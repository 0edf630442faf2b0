"""Parity: the CLI and the MCP server take the arguments `tideline.fields` declares, with the
same names, defaults, bounds and choices. A driver that drifts from the spec fails here; the
self-tests check that a drifted spec is reported, so the checks cannot rot into always-green."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

import anyio
import pytest
import typer
from typer.core import TyperArgument, TyperOption

from tideline.app import Tideline
from tideline.cli.main import app as tideline_cli
from tideline.cli.memo import app as memo_cli
from tideline.config import Settings
from tideline.fields import COMMANDS, MEMO_SEARCH, MEMORY_SEARCH, NO_ITEMS, Command, Field
from tideline.mcp import ToolServer, build_server

#: Options every command may add for the terminal: they are not arguments of the core call.
CLI_ONLY = {"json_out", "root"}


def click_command(path: str) -> Any:
    """`"memo search"` -> the (typer-vendored) click command behind `memo search`."""
    words = path.split()
    command: Any = typer.main.get_command(memo_cli if words[0] == "memo" else tideline_cli)
    for word in words[1:] if words[0] == "memo" else words:
        command = command.commands[word]
    return command


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def cli_problems(cmd: Command, command: Any) -> list[str]:
    """How `command`'s parameters differ from `cmd`'s fields."""
    problems = []
    params = {p.name: p for p in command.params if p.name not in CLI_ONLY}
    by_field: dict[str, Any] = {}
    for f in cmd.fields:
        match = [
            p
            for p in params.values()
            if (isinstance(p, TyperArgument) and f.positional and p.name == f.name)
            or (isinstance(p, TyperOption) and not f.positional and f.option in p.opts)
        ]
        if not match:
            problems.append(f"{f.name}: no {'argument' if f.positional else f.option}")
            continue
        by_field[f.name] = match[0]
    extra = set(params) - {p.name for p in by_field.values()}
    problems += [f"{name}: not in the spec" for name in sorted(extra)]
    for name, p in by_field.items():
        problems += [f"{name}: {d}" for d in _cli_diff(cmd.field(name), p)]
    return problems


def _cli_diff(f: Field, p: Any) -> list[str]:
    diffs = []
    if f.required != p.required:
        diffs.append(f"required {p.required} != {f.required}")
    if f.many:
        if not p.multiple:
            diffs.append("not repeatable")
    elif not f.required and _plain(p.default) != f.default:
        diffs.append(f"default {p.default!r} != {f.default!r}")
    if (p.min, p.max) != (f.ge, f.le):
        diffs.append(f"range {p.min}..{p.max} != {f.ge}..{f.le}")
    kind = p.type_descriptor.annotation
    choices = (
        tuple(e.value for e in kind) if isinstance(kind, type) and issubclass(kind, Enum) else ()
    )
    if choices != f.choices:
        diffs.append(f"choices {choices} != {f.choices}")
    if f.help not in (getattr(p, "help", "") or ""):
        diffs.append("help differs from the spec")
    return diffs


def mcp_problems(cmd: Command, schema: dict[str, Any], aliases: dict[str, str]) -> list[str]:
    """How a tool's input schema (and the server's synonyms) differ from `cmd`'s fields."""
    problems = []
    props: dict[str, Any] = schema.get("properties", {})
    names = {f.name for f in cmd.fields}
    problems += [f"{n}: not in the schema" for n in sorted(names - set(props))]
    problems += [f"{n}: not in the spec" for n in sorted(set(props) - names)]
    required = set(schema.get("required", []))
    for f in cmd.fields:
        prop = props.get(f.name)
        if prop is None:
            continue
        variants = prop.get("anyOf", [prop])
        variants += [v["items"] for v in variants if "items" in v]  # a list's bounds: per item
        if f.required != (f.name in required):
            problems.append(f"{f.name}: required {f.name in required} != {f.required}")
        default = None if f.default in (None, NO_ITEMS) else f.default
        if not f.required and prop.get("default") != default:
            problems.append(f"{f.name}: default {prop.get('default')!r} != {default!r}")
        low = next((v["minimum"] for v in variants if "minimum" in v), None)
        high = next((v["maximum"] for v in variants if "maximum" in v), None)
        if (low, high) != (f.ge, f.le):
            problems.append(f"{f.name}: range {low}..{high} != {f.ge}..{f.le}")
        enum = next((tuple(v["enum"]) for v in variants if "enum" in v), ())
        if enum != f.choices:
            problems.append(f"{f.name}: choices {enum} != {f.choices}")
        if f.many and not any(v.get("type") == "array" for v in variants):
            problems.append(f"{f.name}: not a list")
        if not prop.get("description", "").startswith(f.help):
            problems.append(f"{f.name}: description differs from the spec")
    if aliases != cmd.aliases:
        problems.append(f"synonyms {aliases} != {cmd.aliases}")
    return problems


@pytest.fixture(scope="module")
def server() -> ToolServer:
    return build_server(Tideline(Settings.load(overrides={"embedder": "none"})))


@pytest.fixture(scope="module")
def schemas(server: ToolServer) -> dict[str, dict[str, Any]]:
    async def listed() -> dict[str, dict[str, Any]]:
        return {t.name: t.input_schema for t in await server.list_tools()}

    return anyio.run(listed)


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.cli], ids=lambda c: c.cli)
def test_cli_takes_the_declared_arguments(cmd: Command) -> None:
    assert cmd.cli is not None
    assert cli_problems(cmd, click_command(cmd.cli)) == []


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.tool], ids=lambda c: c.tool)
def test_mcp_takes_the_declared_arguments(
    cmd: Command, schemas: dict[str, dict[str, Any]], server: ToolServer
) -> None:
    assert cmd.tool in schemas
    assert mcp_problems(cmd, schemas[cmd.tool], server.aliases.get(cmd.tool, {})) == []


def _drift(cmd: Command, field: str, change: dict[str, Any]) -> Command:
    fields = tuple(dataclasses.replace(f, **change) if f.name == field else f for f in cmd.fields)
    return dataclasses.replace(cmd, fields=fields)


DRIFTS = [
    (MEMORY_SEARCH, "k", {"le": 100}, "k: range 1..200 != 1..100"),
    (MEMORY_SEARCH, "since", {"name": "after"}, "after: "),
    (MEMORY_SEARCH, "mode", {"choices": ("hybrid", "lex")}, "mode: choices"),
    (MEMO_SEARCH, "k", {"default": 10}, "k: default"),
]


@pytest.mark.parametrize(("cmd", "name", "change", "expected"), DRIFTS)
def test_a_drifted_spec_is_reported_for_both_drivers(
    cmd: Command,
    name: str,
    change: dict[str, Any],
    expected: str,
    schemas: dict[str, dict[str, Any]],
    server: ToolServer,
) -> None:
    drifted = _drift(cmd, name, change)
    assert cmd.cli is not None and cmd.tool is not None
    cli = cli_problems(drifted, click_command(cmd.cli))
    mcp = mcp_problems(drifted, schemas[cmd.tool], server.aliases[cmd.tool])
    assert any(p.startswith(expected) for p in cli), cli
    assert any(p.startswith(expected) for p in mcp), mcp
