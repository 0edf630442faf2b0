"""Which module holds each `tideline` command, and the app built from them.

The installed `tideline` (and `python -m tideline`) runs `run()`, which imports only the module of
the command it was given: a `tideline search` pays for the memory commands, not for the MCP and
web servers, Sleep, DREAM or the library (issue 25: a CLI search within 1.5 s of process start).
`tideline.cli.main.app` is every command, for `--help`, the tests and the generated docs;
`tests/test_cli_registry.py` checks that each module registers exactly the names listed here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable

import typer

from tideline.cli._help import HelpGroup
from tideline.cli._version import version_option

#: Each command module under `tideline.cli` and the top-level names it registers, in `--help`
#: order.
MODULES: dict[str, tuple[str, ...]] = {
    "doctor": ("doctor",),
    "serve": ("serve",),
    "memory": ("search", "write", "trace", "import", "sessions", "stats", "embed"),
    "forget": ("forget",),
    "backup": ("export",),
    "migrate": ("migrate",),
    "scripts": ("scripts", "heatmap"),
    "inject": ("inject", "prefetch"),
    "sleep": ("sleep", "runs"),
    "profile": ("profile", "fact"),
    "dream": ("dream", "threads", "dream-runs"),
    "hermes": ("hermes",),
}


def _root(version: bool = version_option()) -> None:
    """Tideline: long-term memory for AI agents."""


def build(modules: Iterable[str] = MODULES) -> typer.Typer:
    """The `tideline` app with the commands of these modules."""
    app = typer.Typer(
        name="tideline",
        help="Tideline: long-term memory for AI agents.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        cls=HelpGroup,  # --help in words, with examples (cli._help)
    )
    app.callback()(_root)
    for module in modules:
        importlib.import_module(f"tideline.cli.{module}").register(app)
    return app


def owner(argv: list[str]) -> list[str]:
    """The module of the command `argv` names; every module when it names none we know (help,
    `--version`, a typo: the full app answers those)."""
    word = next((a for a in argv if not a.startswith("-")), None)
    found = [m for m, names in MODULES.items() if word in names]
    return found or list(MODULES)


def run() -> None:
    """The `tideline` command."""
    build(owner(sys.argv[1:]))(prog_name="tideline")
