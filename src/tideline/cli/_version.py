"""`--version` for both commands: the installed package's version, the same one MCP reports."""

from __future__ import annotations

from typing import Any

import typer


def _show(value: bool) -> None:
    if value:
        from tideline import __version__

        typer.echo(f"tideline {__version__}")
        raise typer.Exit()


def version_option() -> Any:
    """An eager `--version` flag for an app's callback: prints and exits before any command."""
    return typer.Option(
        False, "--version", callback=_show, is_eager=True, help="Print the version and exit."
    )
