"""Sleep and dream runs started over HTTP: each in its own thread, its progress kept for polling.

`POST /api/sleep` must answer at once while the run takes minutes, so the run goes to a worker
thread and the request returns its id; `GET /api/runs/{id}` reads the step it is on. The core's
progress callback (`StepEvent` at every step boundary) is the only source of progress. One run of
a kind at a time in this process (the core's lock file refuses a second one from another
process). Kept in memory: the finished runs' records (tokens, what they wrote) are the core's
own run tables; these entries only say what this server started since it began.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tideline.clock import Clock, now_text
from tideline.consolidate import StepEvent
from tideline.errors import RunBusy, TidelineError
from tideline.serve import Kind, Work

log = logging.getLogger("tideline.web")

_FAILED = ("failed", "aborted", "stopped")


@dataclass
class Run:
    """One background run: where it is (`step`, `done` of `total`) and, once over, its report
    (as JSON and as the lines the CLI prints) and `run_id`, the number the core recorded it
    under (the runs tables' #; none for a dry run). `id` is this server's own count of the runs
    it started, which polling uses: sleeps and dreams are numbered apart in the core."""

    id: int
    kind: Kind
    total: int
    status: str = "running"  # running | done | skipped | failed (as the report says)
    step: str | None = None
    done: int = 0
    started_at: str = ""
    finished_at: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] | None = None
    lines: list[str] = field(default_factory=list)
    run_id: int | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Runs:
    """The runs this server started, by id; thread safe."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock  # the app's: a run's times read like the runs it records
        self._lock = threading.Lock()
        self._runs: dict[int, Run] = {}

    def start(self, kind: Kind, total: int, work: Work) -> Run:
        """Start `work(progress)` in a thread; refuse while a run of `kind` is going on."""
        with self._lock:
            busy = [r for r in self._runs.values() if r.kind == kind and r.status == "running"]
            if busy:
                raise RunBusy(
                    f"{kind} run #{busy[0].id} is still going on; wait for it "
                    f"(GET /api/runs/{busy[0].id}) before starting another"
                )
            run = Run(len(self._runs) + 1, kind, total, started_at=now_text(self._clock))
            self._runs[run.id] = run
            thread = threading.Thread(
                target=self._work, args=(run, work), name=f"tideline-{kind}-{run.id}", daemon=True
            )  # daemon: stopping the server abandons a run, which applies in one transaction
        thread.start()
        return run

    def get(self, run_id: int) -> Run | None:
        with self._lock:
            return self._runs.get(run_id)

    def list(self) -> list[Run]:
        """Most recent first."""
        with self._lock:
            return sorted(self._runs.values(), key=lambda r: -r.id)

    def _work(self, run: Run, work: Work) -> None:
        def progress(event: StepEvent) -> None:
            with self._lock:
                run.step = event.name
                if event.phase == "end":
                    run.done = max(run.done, event.n)
                run.events.append({"step": event.name, "n": event.n, "phase": event.phase})

        try:
            done = work(progress)
        except TidelineError as exc:
            self._finish(run, "failed", None, " ".join(str(exc).split()))
        except Exception as exc:  # a crash fails this run, never the server
            log.exception("%s run #%d crashed", run.kind, run.id)
            self._finish(run, "failed", None, f"unexpected {type(exc).__name__}: {exc}")
        else:  # the run's own word: a sleep with no LLM is skipped, a failed one failed
            report = done.to_dict()
            status = str(report.get("status", "done"))
            said = "skipped" if status == "skipped" else "failed" if status in _FAILED else "done"
            error = _why(report, status) if said == "failed" else None
            self._finish(run, said, report, error, done.lines())

    def _finish(
        self,
        run: Run,
        status: str,
        report: dict[str, Any] | None,
        error: str | None,
        lines: Sequence[str] = (),
    ) -> None:
        with self._lock:
            run.status, run.report, run.error = status, report, error
            run.lines = [*lines]
            recorded = (report or {}).get("run_id")
            run.run_id = recorded if isinstance(recorded, int) else None
            run.finished_at = now_text(self._clock)
            if status != "failed":
                run.done = run.total


def _why(report: dict[str, Any], status: str) -> str:
    """A failed run's error, in the report's own words: its errors (a sleep's), its error, or
    its steps' (a step that failed says why); never empty."""
    said = [str(e) for e in report.get("errors") or []]
    said += [str(report["error"])] if report.get("error") else []
    if not said:
        steps = [s for s in report.get("steps") or [] if isinstance(s, dict)]
        said = [f"{s.get('name', 'a step')}: {s['error']}" for s in steps if s.get("error")]
    return " ".join("; ".join(dict.fromkeys(said)).split()) or f"the run ended {status}"
