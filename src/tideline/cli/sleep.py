"""`tideline sleep` and `tideline runs`: consolidate conversations into the profile, and the
record of past runs.

The steps' lines go to stderr as they finish, under a progress bar over the fourteen steps (a
cron log keeps the lines; the bar only shows on a terminal); the summary — what changed, tokens,
what was skipped and why (once) — goes to stdout, or the whole report as JSON with `--json`.
Exit codes: 0 done (or nothing new, or planned); 1 failed; 6 skipped: no LLM to run the LLM steps
(the rule steps ran; the sessions wait); 5 another sleep is running.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from tideline.cli._app import open_app
from tideline.cli._options import takes
from tideline.cli._output import SKIPPED, console, err_console, print_json, progress_bar, styled
from tideline.consolidate import STEPS, SleepReport, StepEvent, written
from tideline.fields import RUNS, SLEEP_RUN

JSON = typer.Option(False, "--json", help="Print JSON.")
if TYPE_CHECKING:
    from tideline.app import Tideline


class Report(Protocol):
    """What a run of steps reports (`SleepReport`, `DreamReport`)."""

    status: str
    errors: list[str]

    @property
    def ok(self) -> bool: ...

    def to_dict(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=Report)


class Record(Protocol):
    """A past run as its owner reads it (`SleepRun`, `DreamRun`)."""

    def to_dict(self) -> dict[str, Any]: ...


Rec = TypeVar("Rec", bound=Record)


def past_runs(read: Callable[[Tideline], Sequence[Rec]], json_out: bool) -> Sequence[Rec] | None:
    """A pipeline's past runs (`tideline runs`, `tideline dream-runs`), most recent first: printed
    as JSON with `--json` (then None), else handed back for the command's own lines."""
    with open_app() as app:
        found = read(app)
    if json_out:
        print_json([r.to_dict() for r in found])
        return None
    return found


def run_steps(
    what: str,
    steps: int,
    json_out: bool,
    run: Callable[[Tideline, StepDisplay | None], R],
    summary: Callable[[R], list[str]],
) -> None:
    """A run of `steps` steps from the command line (`what`: sleep, dream): their lines on
    stderr as they finish, under a bar; then the report as JSON, or `summary`'s lines with the
    errors on stderr. Exit 6 when skipped (no LLM), 1 when it failed."""
    bar = step_bar(what, json_out)
    with open_app() as app, bar:
        report = run(app, None if json_out else StepDisplay(bar, steps))
    if json_out:
        print_json(report.to_dict())
    else:
        for line in summary(report):
            console.print(line, highlight=False, markup=False, soft_wrap=True)
        for error in report.errors:
            err_console.print(
                styled(("error:", "red"), f" {error}"), highlight=False, soft_wrap=True
            )
    if report.status == "skipped":
        raise typer.Exit(SKIPPED)
    if not report.ok:
        raise typer.Exit(1)


def step_bar(what: str, quiet: bool) -> Progress:
    """A progress bar on stderr for a run of steps (`what`: sleep, dream); shown only on a
    terminal and without `quiet` (--json): a log gets the step lines only."""
    return progress_bar(
        SpinnerColumn(),
        TextColumn(f"{what}: {{task.description:<16}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        quiet=quiet,
    )


class StepDisplay:
    """The progress callback: a bar over the steps, each finished step's line above it."""

    def __init__(self, bar: Progress, total: int):
        self.bar = bar
        self.task = bar.add_task("starting", total=total)

    def __call__(self, event: StepEvent) -> None:
        if event.phase == "start":
            self.bar.update(self.task, description=event.name)
            return
        if event.n:
            self.bar.advance(self.task)
        if event.report is not None:
            self.bar.console.print(
                event.report.line(), highlight=False, markup=False, soft_wrap=True
            )


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
