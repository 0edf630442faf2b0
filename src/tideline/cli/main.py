"""The `tideline` command. Each command group lives in its own module; this file only wires them."""

from __future__ import annotations

import typer

from tideline.cli import doctor, inject, memory, profile, scripts, serve, sleep

app = typer.Typer(
    name="tideline",
    help="Tideline: long-term memory for AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("doctor")(doctor.doctor)
app.command("serve")(serve.serve)
memory.register(app)
scripts.register(app)
inject.register(app)
sleep.register(app)
profile.register(app)


@app.callback()
def _root() -> None:
    """Tideline: long-term memory for AI agents."""
