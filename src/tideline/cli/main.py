"""The `tideline` command. Each command group lives in its own module; this file only wires them."""

from __future__ import annotations

import typer

from tideline.cli import (
    backup,
    doctor,
    dream,
    forget,
    inject,
    memory,
    migrate,
    profile,
    scripts,
    serve,
    sleep,
)
from tideline.cli._version import version_option

app = typer.Typer(
    name="tideline",
    help="Tideline: long-term memory for AI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.command("doctor")(doctor.doctor)
app.command("serve")(serve.serve)
memory.register(app)
app.command("forget")(forget.forget)
app.command("export")(backup.export)
app.command("migrate")(migrate.migrate_command)
scripts.register(app)
inject.register(app)
sleep.register(app)
profile.register(app)
dream.register(app)


@app.callback()
def _root(version: bool = version_option()) -> None:
    """Tideline: long-term memory for AI agents."""
