"""The documentation covers the code: every plugin hook, CLI command, MCP tool and setting is
documented, and the generated documents (scripts/gen_docs.py) are current."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
import typer
from mcp import Client

from tideline import hookspecs
from tideline.app import Tideline
from tideline.config import SETTINGS, Settings
from tideline.mcp import build_server

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"


def _gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_docs = _gen_docs()


def test_every_hook_is_documented() -> None:
    doc = (DOCS / "plugins.md").read_text()
    hooks = [
        n
        for n, f in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(f, "tideline_spec")
    ]
    assert hooks
    for name in hooks:
        assert f"### `{name}(" in doc and f"def {name}(" in doc


COMMANDS = [(p, path) for p in gen_docs.PROGRAMS for path in gen_docs.commands(p)]


@pytest.mark.parametrize(("program", "path"), COMMANDS, ids=lambda v: " ".join(v) or "-")
def test_every_command_has_help_and_is_in_the_cli_reference(
    program: str, path: tuple[str, ...]
) -> None:
    command: Any = typer.main.get_command(gen_docs.PROGRAMS[program])
    for word in path:
        command = command.commands[word]
    assert (command.help or "").strip(), f"{program} {' '.join(path)} has no help"
    for param in command.params:
        assert (getattr(param, "help", None) or "").strip(), f"{param.name} has no help"
    assert f"`{' '.join((program, *path))}`" in (DOCS / "cli.md").read_text()


def test_every_mcp_tool_is_described_and_in_the_tool_table() -> None:
    app = Tideline(Settings.load(overrides={"embedder": "none"}))

    async def listed() -> list[Any]:
        async with Client(build_server(app)) as client:
            return list((await client.list_tools()).tools)

    try:
        tools = anyio.run(listed)
    finally:
        app.close()
    table = (DOCS / "mcp.md").read_text().split("## Tools", 1)[1]
    rows = {m for line in table.splitlines() for m in re.findall(r"^\| `(\w+)`", line)}
    assert tools
    for tool in tools:
        assert (tool.description or "").strip(), f"{tool.name} has no description"
        for prop, schema in tool.input_schema.get("properties", {}).items():
            assert schema.get("description"), f"{tool.name}.{prop} has no description"
        assert tool.name in rows, f"{tool.name} has no row in the docs/mcp.md tool table"


def test_every_setting_is_in_the_configuration_table() -> None:
    doc = (DOCS / "configuration.md").read_text()
    for s in SETTINGS:
        assert f"| `{s.name}` | `{s.env}` |" in doc, f"{s.name} missing from configuration.md"


def test_generated_documents_are_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert gen_docs.main(["--check"]) == 0, capsys.readouterr().out
