"""Which module holds each `tideline` command, and the app built from them.

The installed `tideline` (and `python -m tideline`) runs `run()`, which imports only the module of
the command it was given and builds only that command: a `tideline search` pays for neither the
MCP and web servers, Sleep, DREAM and the library (issue 25: a CLI search within 1.5 s of process
start) nor the other memory commands' options (issue 34: 0.8 s).
`tideline.cli.main.app` is every command, for `--help`, the tests and the generated docs;
`tests/cli/test_registry.py` checks that each module registers exactly the names listed here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable

import typer

from tideline.cli._help import HelpGroup, version_option

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


def _word(argv: list[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


def owner(argv: list[str]) -> list[str]:
    """The module of the command `argv` names; every module when it names none we know (help,
    `--version`, a typo: the full app answers those)."""
    word = _word(argv)
    found = [m for m, names in MODULES.items() if word in names]
    return found or list(MODULES)


def only(app: typer.Typer, name: str) -> typer.Typer:
    """`app` with only its command (or group) `name`: typer turns every registered command's
    parameters into click's when it runs any one of them."""
    app.registered_commands = [c for c in app.registered_commands if c.name == name]
    app.registered_groups = [g for g in app.registered_groups if g.name == name]
    return app


def app_for(argv: list[str]) -> typer.Typer:
    """The app that runs `argv`: only the command it names, or every command when it names
    none we know."""
    modules = owner(argv)
    word = _word(argv)
    app = build(modules)
    return only(app, word) if len(modules) == 1 and word else app


def run() -> None:
    """The `tideline` command."""
    app_for(sys.argv[1:])(prog_name="tideline")
