"""`tideline migrate`: copy the agent database between SQLite and PostgreSQL, and check it."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from tideline.cli._options import takes
from tideline.cli._output import console, err_console, errors_to_exit, print_json, styled
from tideline.config import Settings
from tideline.errors import InvalidInput
from tideline.fields import MIGRATE
from tideline.store import Namespace, is_postgres_url
from tideline.upkeep import MoveReport, migrate


@takes(MIGRATE)
def migrate_command(
    json_out: bool = typer.Option(False, "--json", help="Print the report as JSON."), **args: Any
) -> None:
    """Copy an agent's memory into a PostgreSQL namespace (or back to a file): every table, the
    text index and the vectors as stored. Run it again to resume; it ends by counting and
    hashing both ends, table by table (exit 1 when they differ)."""
    to, source = args["to"], args["source"]
    with errors_to_exit():
        settings = Settings.load()
        if source is None:
            source = str(settings.db_path) if is_postgres_url(to) else settings.database_url
        if not source:
            raise InvalidInput(
                "nothing to copy back from: pass --from postgresql://… or set TIDELINE_DATABASE_URL"
            )
        namespace = Namespace(settings.agent_name, settings.database_user or None)
        report = migrate(to, source, namespace, progress=_progress)
    if json_out:
        print_json(report.to_dict())
    else:
        _print(report)
    if not report.ok:
        raise typer.Exit(1)


def _progress(line: str) -> None:
    err_console.print(line, highlight=False, soft_wrap=True)


def _print(report: MoveReport) -> None:
    console.print(f"{report.source} → {report.target}", highlight=False, soft_wrap=True)
    table = Table("table", "source rows", "target rows", "copied now", "sha256", "")
    for t in report.tables:
        table.add_row(
            t.table,
            f"{t.source_rows:,}",
            f"{t.target_rows:,}",
            f"{t.copied:,}",
            t.source_sha256[:12],
            "ok" if t.ok else "DIFFERS",
        )
    for i in report.indexes:
        table.add_row(
            f"{i.index} vectors",
            f"{i.source_vectors:,}",
            f"{i.target_vectors:,}",
            f"{i.vectors_copied:,}",
            i.source_sha256[:12],
            "ok" if i.ok else "DIFFERS",
        )
    console.print(table)
    for line in report.skipped:
        err_console.print(f"skipped {line}", highlight=False, soft_wrap=True)
    if report.ok:
        console.print(styled(("both ends agree", "green")))
    else:
        err_console.print(
            styled(("the copy differs from its source; run the command again", "red"))
        )


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_command)
