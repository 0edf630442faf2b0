"""`--help` is for people: what an option takes in words (no `<bool>`, `<list[int]>` or an id's
bound of 2^63 − 1), a command list of whole first sentences, and examples under every command
that the parser accepts as written."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

import click
import pytest
import typer
from typer.testing import CliRunner

from tideline.cli._help import EXAMPLES, summary
from tideline.cli.main import app as tideline_app
from tideline.cli.memo import app as memo_app
from tideline.store import MAX_ID

PROGRAMS = {"tideline": tideline_app, "memo": memo_app}
#: What typer shows of Python: a type in angle brackets, a list type, an id's upper bound.
PYTHON = re.compile(r"<(?:bool|str|int|float|path|list\[.*?\]|[a-z]+ range)>|list\[|" + str(MAX_ID))


def commands(program: str) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command path under `program` with its command, groups included."""

    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
        for name, sub in getattr(command, "commands", {}).items():
            yield (*path, name), sub
            yield from walk(sub, (*path, name))

    yield from walk(typer.main.get_command(PROGRAMS[program]), ())


def help_of(program: str, *path: str, columns: int = 100) -> str:
    env = {"COLUMNS": str(columns), "TERMINAL_WIDTH": str(columns), "NO_COLOR": "1"}
    done = CliRunner().invoke(PROGRAMS[program], [*path, "--help"], prog_name=program, env=env)
    assert done.exit_code == 0, done.output
    return done.stdout


EVERY = [(p, path) for p in PROGRAMS for path, _ in commands(p)]


@pytest.mark.parametrize(("program", "path"), EVERY, ids=[" ".join((p, *c)) for p, c in EVERY])
def test_every_help_says_what_options_take_in_words(program: str, path: tuple[str, ...]) -> None:
    shown = help_of(program, *path)
    assert not PYTHON.search(shown), PYTHON.findall(shown)


def listed(shown: str) -> dict[str, str]:
    """The rows of a help's Commands panel: name -> description, wrapped lines joined."""
    rows: dict[str, str] = {}
    panel = shown.split("─ Commands ─", 1)[1] if "─ Commands ─" in shown else ""
    name = ""
    for line in panel.splitlines():
        cell = line.strip("│ ")
        if not line.startswith("│") or not cell:
            continue
        if not line.startswith("│  "):  # a new row: the name, then its description
            name, _, cell = cell.partition(" ")
        rows[name] = " ".join([rows.get(name, ""), cell.strip()]).strip()
    return rows


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_command_list_gives_each_command_its_first_sentence(program: str) -> None:
    """A list shows each command's first sentence whole, not its docstring's first lines."""
    for path, command in commands(program):
        first = summary(command.help)
        assert first.endswith((".", "?", ")")) and "\n" not in first, (path, first)
        assert listed(help_of(program, *path[:-1]))[path[-1]] == first, path


def _parses(program: str, line: str) -> None:
    """`line` as the parser reads it: every option known, every value of its type."""
    prog, *args = shlex.split(line)
    assert prog == program, line
    command: Any = typer.main.get_command(PROGRAMS[program])
    while args and args[0] in getattr(command, "commands", {}):
        command = command.commands[args.pop(0)]
    with command.make_context(prog, args) as ctx:
        assert ctx.command is command


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_command_shows_examples_the_parser_accepts(program: str) -> None:
    leaves = {
        " ".join((program, *path)) for path, c in commands(program) if not hasattr(c, "commands")
    }
    known = {key for key in EXAMPLES if key.split()[0] == program}
    assert leaves == known, (sorted(leaves - known), sorted(known - leaves))
    for key in sorted(leaves):
        shown = help_of(program, *key.split()[1:], columns=1000)
        for line in EXAMPLES[key]:
            assert f"$ {line}" in shown, (key, line)
            _parses(program, line)
