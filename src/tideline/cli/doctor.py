"""`tideline doctor`."""

from __future__ import annotations

import typer
from rich.table import Table

from tideline.cli._output import console, err_console, errors_to_exit, print_json
from tideline.config import Settings
from tideline.doctor import run_doctor


def doctor(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Check Python, SQLite, FTS5 trigram, sqlite-vec, the embedder and the home folder."""
    with errors_to_exit():
        report = run_doctor(Settings.load())
    if json_out:
        print_json({"ok": report.ok, **report.facts, "problems": report.problems})
    else:
        table = Table(show_header=False, box=None)
        for key, value in report.facts.items():
            table.add_row(key, str(value))
        console.print(table)
        for problem in report.problems:
            err_console.print(f"[red]problem:[/red] {problem}", soft_wrap=True)
        if report.ok:
            console.print("[green]all good[/green]")
    if not report.ok:
        raise typer.Exit(1)
