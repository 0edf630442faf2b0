"""The run runner on real SQLite files: a run's status is its steps' word (or `skipped` without
an LLM, or `failed`), set in one place; an exception fails the run and its record is still
finished; the next run closes one a dead process left `running`; one run of a pipeline at a
time; the script layer's per-step rows go through the same record."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tideline.analysis import ANALYSIS_MIGRATIONS, ScriptTables
from tideline.clock import system_clock
from tideline.errors import SleepBusy, StepFailed
from tideline.llm import TokenMeter
from tideline.memory import AGENT_MIGRATIONS
from tideline.runs import Book, Outcome, RunLock, Runner, Step, StepReport
from tideline.store import INTERRUPTED, Database, RunLog, open_database

NOW = "2026-12-03T12:00:00Z"


@dataclass
class Report:
    run_id: int | None
    status: str = "running"
    reason: str = ""
    tokens: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Scope:
    meter: TokenMeter
    step: str | None = None
    schema: Any = None
    cuts: list[str] = field(default_factory=list)
    prompts: dict[str, int] = field(default_factory=dict)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    with open_database(tmp_path / "runs.db") as opened:
        RunLog.create_llm_runs(opened, "trial_runs", ("running", "done", "failed", "skipped"), "x")
        yield opened


def _log(db: Database) -> RunLog:
    return RunLog(db, "trial_runs", ("id", "status", "errors", "finished_at"), ("errors",))


def _book(log: RunLog) -> Book[Report]:
    def finish(run_id: int, report: Report) -> None:
        log.finish(run_id, report.status, NOW, errors=report.errors)

    return Book[Report](
        lambda: log.close_interrupted(NOW),
        lambda: log.start(NOW, x=""),
        log.record_tokens,
        finish,
    )


def _runner(db: Database, llm: None = None) -> Runner:
    return Runner(RunLock(db, "trial", SleepBusy), TokenMeter(), llm, "skipped: no LLM here")


def test_the_run_is_recorded_with_the_status_its_steps_said(db: Database) -> None:
    log = _log(db)
    report = _runner(db).run(_book(log), Report, lambda out: "done")
    assert report.status == "done" and report.run_id is not None and report.seconds >= 0
    assert log.get(report.run_id) == {
        "id": report.run_id,
        "status": "done",
        "errors": [],
        "finished_at": NOW,
    }


def test_a_run_whose_llm_step_was_skipped_is_skipped_saying_why_once(db: Database) -> None:
    runner = _runner(db)
    step = Step[Scope, Outcome](1, "guess", "llm", "guess")

    def steps(out: Report) -> str:
        rep = StepReport(step.n, step.name, step.kind)
        with runner.step(step, Scope(runner.meter), rep) as end:
            assert runner.skips(step)
            rep.take(Outcome(note="no LLM", status="skipped"))
            end()
        return "done"

    report = runner.run(_book(_log(db)), Report, steps)
    assert (report.status, report.reason) == ("skipped", "no LLM here")
    assert [r["status"] for r in _log(db).recent()] == ["skipped"]


def test_a_step_failed_fails_the_run_and_the_record_says_why(db: Database) -> None:
    def steps(out: Report) -> str:
        raise StepFailed("step 2 guess failed, nothing applied")

    report = _runner(db).run(_book(_log(db)), Report, steps)
    assert report.status == "failed"
    assert report.errors == ["step 2 guess failed, nothing applied"]
    assert [r["errors"] for r in _log(db).recent()] == [report.errors]


def test_anything_else_fails_the_run_finishes_its_record_and_goes_on(db: Database) -> None:
    def steps(out: Report) -> str:
        raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt):
        _runner(db).run(_book(_log(db)), Report, steps)
    (row,) = _log(db).recent()
    assert row["status"] == "failed" and row["errors"] == ["stopped by KeyboardInterrupt: stop"]


def test_the_next_run_closes_a_run_a_dead_process_left_running(db: Database) -> None:
    log = _log(db)
    dead = log.start(NOW, x="")
    report = _runner(db).run(_book(log), Report, lambda out: "done")
    assert log.get(dead) == {
        "id": dead,
        "status": "failed",
        "errors": [INTERRUPTED],
        "finished_at": NOW,
    }
    assert report.status == "done"


def test_one_run_at_a_time_and_a_dry_run_records_nothing(db: Database) -> None:
    def steps(out: Report) -> str:
        with pytest.raises(SleepBusy, match="another trial is running"):
            _runner(db).run(_book(_log(db)), Report, lambda inner: "done")
        return "planned"

    report = _runner(db).run(None, Report, steps)
    assert (report.status, report.run_id) == ("planned", None)
    assert _log(db).recent() == []


def test_the_script_layer_records_each_step_through_the_runner(tmp_path: Path) -> None:
    with open_database(tmp_path / "memory.db", AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS) as db:
        tables = ScriptTables(db, clock=system_clock)
        with tables.record_run("topics") as run:
            run.summary["topics"] = 3
        with pytest.raises(ValueError, match="bad rows"), tables.record_run("graph"):
            raise ValueError("bad rows")
        rows = db.rows("SELECT step, status, summary, finished_at IS NOT NULL AS over FROM runs")
    assert rows == [
        {"step": "topics", "status": "ok", "summary": '{"topics": 3}', "over": 1},
        {"step": "graph", "status": "failed", "summary": "{}", "over": 1},
    ]
    assert run.seconds >= 0
