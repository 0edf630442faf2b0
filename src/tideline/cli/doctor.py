"""`tideline doctor [--repair]`."""

from __future__ import annotations

import typer
from rich.table import Table

from tideline.cli._output import console, err_console, errors_to_exit, print_json, styled
from tideline.config import Settings
from tideline.upkeep import Repaired, Report, repair, run_doctor


def doctor(
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    repair_files: bool = typer.Option(
        False,
        "--repair",
        help="Recover damaged databases into new files (the damaged ones are kept, renamed "
        "<name>.damaged-<time>); on PostgreSQL build missing indexes and embed rows without "
        "vectors. Then check again. Stop the MCP server and watchers first.",
    ),
) -> None:
    """Check Python, SQLite, FTS5 trigram, sqlite-vec, the embedder, the home folder and every
    database file (header, write-ahead log, PRAGMA quick_check). With TIDELINE_DATABASE_URL:
    the PostgreSQL server and its version, pgvector, the namespace's schema, migrations, GIN and
    HNSW indexes, row counts and live rows without a vector. Exit 1 when a check fails."""
    with errors_to_exit():
        settings = Settings.load()
        repaired = repair(settings) if repair_files else None
        report = run_doctor(settings)
    ok = report.ok and all(r.ok for r in repaired or [])
    if json_out:
        data = {"ok": ok, **report.facts, "problems": report.problems}
        data["files"] = [f.to_dict() for f in report.files]
        if repaired is not None:
            data["repaired"] = [r.to_dict() for r in repaired]
        print_json(data)
    else:
        for r in repaired or []:
            _print_repaired(r)
        _print_report(report)
    if not ok:
        raise typer.Exit(1)


def _print_report(report: Report) -> None:
    table = Table(show_header=False, box=None)
    for key, value in report.facts.items():
        table.add_row(key, str(value))
    for f in report.files:
        table.add_row(f.role, f"{f.path} ({'ok' if f.ok else 'DAMAGED'})")
    console.print(table)
    for problem in report.problems:
        err_console.print(
            styled(("problem:", "red"), f" {problem}"), soft_wrap=True, highlight=False
        )
    if report.ok:
        console.print(styled(("all good", "green")))


def _print_repaired(r: Repaired) -> None:
    if r.action == "failed":
        err_console.print(
            styled(("repair failed:", "red"), f" {r.error}"), soft_wrap=True, highlight=False
        )
        return
    if r.action == "healthy":
        return
    if r.action == "rebuilt":  # a PostgreSQL namespace: indexes and vectors, nothing set aside
        console.print(f"{r.path}: {'; '.join(r.notes)}", soft_wrap=True)
        return
    rows = ", ".join(f"{t} {n}" for t, n in r.rows.items()) or "no rows"
    what = f"recovered ({rows})" if r.action == "recovered" else r.action
    console.print(f"{r.path}: {what}; the damaged file is kept as {r.kept}", soft_wrap=True)
    for table, damage in r.lost.items():
        console.print(f"  {table}: some rows were unreadable ({damage})", soft_wrap=True)
    for note in r.notes:
        console.print(f"  {note}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)
