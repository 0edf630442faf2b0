"""`tideline sleep` and `tideline runs`: consolidate conversations into the profile, and the
record of past runs.

The steps' lines go to stderr as they finish, under a progress bar over the fourteen steps (a
cron log keeps the lines; the bar only shows on a terminal); the summary — what changed, tokens,
what was skipped and why (once) — goes to stdout, or the whole report as JSON with `--json`.
Exit codes: 0 done (or nothing new, or planned); 1 failed; 6 skipped: no LLM to run the LLM steps
(the rule steps ran; the sessions wait); 5 another sleep is running.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from tideline.cli._options import takes
from tideline.cli._output import console
from tideline.cli._runs import past_runs, run_steps
from tideline.consolidate import STEPS, SleepReport, written
from tideline.fields import RUNS, SLEEP_RUN

JSON = typer.Option(False, "--json", help="Print JSON.")


def summary(report: SleepReport) -> list[str]:
    """What a person wants after a run: status, what changed, tokens, what was skipped."""
    out = [report.lines()[0]]
    if report.dry_run:
        out.append(
            f"plan (nothing applied): {written(report.plan) if report.plan else 'nothing to change'}"
        )
    elif report.applied:  # written, whatever the status (rule steps apply without an LLM)
        out.append(f"applied: {written(report.applied)} (profile version {report.version})")
    elif report.plan:
        out.append(f"not applied: {written(report.plan)}")
    tokens = report.tokens
    if tokens.get("calls"):
        out.append(
            f"tokens: {tokens['prompt_tokens']} in, {tokens['completion_tokens']} out in "
            f"{tokens['calls']} call(s){' (estimated)' if tokens.get('estimated') else ''}"
        )
    if report.status == "skipped":  # the head line said why, once
        parts = [s.name for s in STEPS if s.kind == "llm+rule" and s.name not in report.skipped]
        out.append(
            f"LLM steps skipped: {', '.join(report.skipped)}; rule parts only: {', '.join(parts)};"
            " the sessions wait for a run with an LLM"
        )
    else:
        out += [f"skipped {name}: {why}" for name, why in report.skipped.items()]
    return out + report.notes


@takes(SLEEP_RUN)
def sleep(json_out: bool = JSON, **args: Any) -> None:
    """Consolidate unprocessed conversations into the profile (the fourteen steps)."""
    run_steps(
        "sleep",
        len(STEPS),
        json_out,
        lambda app, progress: app.sleep.run(**args, progress=progress),
        summary,
    )


@takes(RUNS)
def runs(json_out: bool = JSON, **args: Any) -> None:
    """Past sleep runs, most recent first: status, tokens, the profile version they produced."""
    found = past_runs(lambda app: app.profile.runs(**args), json_out)
    if found is None:
        return
    table = Table(
        "run", "status", "started", "finished", "tokens in", "tokens out", "version", "error"
    )
    for r in found:
        table.add_row(
            str(r.id),
            r.status,
            r.started_at,
            r.finished_at or "",
            str(r.tokens_in),
            str(r.tokens_out),
            "" if r.version is None else str(r.version),
            str(r.errors[0])[:80] if r.errors else "",
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("sleep")(sleep)
    app.command("runs")(runs)
