"""`tideline hermes install`: make Hermes Agent use Tideline as its memory (or stop).

Writes `$HERMES_HOME/plugins/tideline/` and sets `memory.provider: tideline` in Hermes's
config.yaml (`tideline.hermes.install`); `--uninstall` undoes both. Safe to run again.
"""

from __future__ import annotations

from pathlib import Path

import typer

from tideline.cli._output import errors_to_exit, print_json

hermes_app = typer.Typer(
    name="hermes",
    help="Hermes Agent: install Tideline as its memory provider (docs/hermes.md).",
    no_args_is_help=True,
)


@hermes_app.command("install")
def install(
    hermes_home: Path | None = typer.Option(
        None,
        "--hermes-home",
        help="Hermes's home (default: $HERMES_HOME, else ~/.hermes).",
        show_default=False,
    ),
    uninstall: bool = typer.Option(
        False,
        "--uninstall",
        help="Remove the plugin and give memory.provider back its earlier value.",
    ),
    no_config: bool = typer.Option(
        False,
        "--no-config",
        help="Leave config.yaml alone and print the line to set.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print what was done as JSON."),
) -> None:
    """Install the Tideline plugin into a Hermes home and make it the memory provider."""
    from tideline.hermes import default_hermes_home
    from tideline.hermes import install as do_install
    from tideline.hermes import uninstall as do_uninstall

    with errors_to_exit():
        home = hermes_home or default_hermes_home()
        done = do_uninstall(home) if uninstall else do_install(home, set_provider=not no_config)
    if json_out:
        print_json(done.to_dict())
        return
    what = "removed from" if uninstall else "installed in"
    if not done.changed:
        what = "already removed from" if uninstall else "already installed in"
    typer.echo(f"tideline: {what} {done.hermes_home} (plugin {done.plugin})")
    if done.provider is not None:
        typer.echo(f"memory.provider: {done.provider or 'built-in only'} ({done.config})")
    if done.todo:
        typer.echo(f"next: {done.todo}")


def register(app: typer.Typer) -> None:
    app.add_typer(hermes_app, name="hermes")
