"""A pipeline's run from the command line, one way for `tideline sleep` and `tideline dream`:
each step's line on stderr as it finishes, under a progress bar over the steps (a cron log keeps
the lines; the bar only shows on a terminal); then the report as JSON, or the command's summary
lines with the errors on stderr; exit 6 when skipped (no LLM), 1 when it failed. And the past
runs of a pipeline (`tideline runs`, `tideline dream-runs`), as JSON or for the command's lines.
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

from tideline.cli._app import open_app
from tideline.cli._output import SKIPPED, console, err_console, print_json, progress_bar, styled
from tideline.runs import StepEvent

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
