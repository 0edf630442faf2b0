"""One run of a pipeline, kept one way for Sleep, DREAM and the script layer: the pipelines hand
over their steps.

    lock ─▶ close runs a dead process left `running` ─▶ start the record ─▶ the steps (a token
    meter that records what it spends as it spends it; per step: progress at its start and
    end, its report measured: seconds, tokens, cuts, prompt) ─▶ the status: the steps' word,
    `skipped` without an LLM, `failed` on an exception ─▶ finish the record, whatever happened

- One run at a time per database and pipeline (`RunLock`); a dry run takes the lock too but
  records nothing (no `Book`).
- A step of kind `llm` is skipped without an LLM (`skips`); a run whose steps were done but for
  such skips is `skipped`, its reason said once, so the work waits for a run with an LLM.
- A step that raises is `failed` in its report, and the exception goes on to its pipeline, which
  says what failing means there (Sleep stops and applies nothing; DREAM keeps the layers before).
  `StepFailed` reaching the runner fails the run with its text; anything else fails it too,
  saying what stopped it, and goes on. The record is finished in every case, so only a killed
  process leaves a run `running`.
- `recorded` is the record alone, for a pipeline with no lock and no LLM: the script layer
  records each of its steps as a run of its own with it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from tideline.errors import StepFailed
from tideline.runs._lock import RunLock

if TYPE_CHECKING:  # the record alone (the script layer's) loads no LLM client
    from tideline.llm import LLM, TokenMeter

Phase = Literal["start", "end"]


@dataclass
class Outcome:
    """What a step hands back to the runner: counts of what it changed and a one-line note."""

    changes: dict[str, int] = field(default_factory=dict)
    note: str = ""
    status: str = "done"  # "done" | "skipped" (the step had nothing it could do)


C = TypeVar("C")  # what a pipeline's steps share (its context)
Out = TypeVar("Out", bound=Outcome)


@dataclass(frozen=True)
class Step(Generic[C, Out]):
    """One step of a pipeline (a Sleep step, a DREAM layer)."""

    n: int
    name: str
    kind: str  # "rule", "llm" (skipped without one) or "llm+rule" (its rule part always runs)
    prompt: str | None = None  # the prompt and meter key of its LLM calls
    run: Callable[[C], Out] | None = None  # None: its pipeline runs it itself
    schema: Any = None  # the pydantic model its LLM calls answer


@dataclass
class StepReport:
    n: int  # the step's number; 0 for what runs beside the steps (apply, post-transaction tasks)
    name: str
    kind: str  # "llm", "rule" or "llm+rule"
    status: str = "running"  # done | skipped | failed
    seconds: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    changes: dict[str, int] = field(default_factory=dict)
    note: str = ""
    error: str = ""
    prompt: str | None = None  # `extract@1`: the prompt version an LLM step used
    cuts: str = ""  # what the model's answers had past their caps ("observations cut at 60 …")

    def take(self, out: Outcome) -> None:
        self.changes, self.note, self.status = out.changes, out.note, out.status

    def line(self) -> str:
        label = f"{self.n:>2}. {self.name}" if self.n else f"    {self.name}"
        what = ", ".join(f"{k} {v}" for k, v in self.changes.items() if v)
        tokens = f", {self.tokens_in}+{self.tokens_out} tokens" if self.tokens_in else ""
        tail = self.error or self.note
        parts = [p for p in (what, tail, self.cuts) if p]
        return f"{label:<22} {self.status:<8} {self.seconds:6.2f}s{tokens}  " + " — ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cut_note(cuts: Sequence[str]) -> str:
    """The cuts of one step's answers as one line: `cut: observations: cut at 60 of 300; …`."""
    if not cuts:
        return ""
    counted = Counter(cuts)
    return "cut to the schema's caps: " + "; ".join(
        c if n == 1 else f"{c} (×{n})" for c, n in counted.items()
    )


@dataclass(frozen=True)
class StepEvent:
    """Sent to the progress callback at every step boundary; raising from it fails the run
    there (the same path as a failing step), which is how the tests inject faults."""

    name: str
    n: int
    phase: Phase
    report: StepReport | None = None  # at "end"


Progress = Callable[[StepEvent], None]


class Scope(Protocol):
    """What a step's LLM calls go through: the run's meter, the step and schema they answer,
    the cuts of their answers and the versions of the prompts they used."""

    meter: TokenMeter
    step: str | None
    schema: Any
    cuts: list[str]
    prompts: dict[str, int]


class Report(Protocol):
    """What the runner fills in a pipeline's report."""

    status: str
    reason: str
    tokens: dict[str, Any]
    errors: list[str]
    seconds: float


R = TypeVar("R", bound=Report)


@dataclass(frozen=True)
class Book(Generic[R]):
    """Where a pipeline records its runs: its run table's owner, each call under its lock."""

    close_interrupted: Callable[[], object]  # runs left `running` by a dead process → failed
    start: Callable[[], int]  # a new run, `running`: its id
    record_tokens: Callable[[int, int, int], None]  # (run, in, out) spent so far
    finish: Callable[[int, R], None]  # the run's end, from its report


@contextmanager
def recorded(
    book: Book[R] | None, report: Callable[[int | None], R], meter: TokenMeter | None = None
) -> Iterator[R]:
    """One run's record around the block, which fills the report it yields (`report(run_id)`;
    no `book`: nothing recorded): runs a dead process left `running` closed, the run started,
    its tokens recorded as `meter` spends them (no meter: a run without an LLM), and its end
    finished from the report however the block ends. An exception fails the run: `StepFailed`
    with its text, and is swallowed (the report says it); anything else saying what stopped
    it, and goes on."""
    started = time.monotonic()
    run_id = None
    if book is not None:
        book.close_interrupted()
        run_id = started_id = book.start()
        if meter is not None:
            meter.on_record = lambda m: book.record_tokens(
                started_id, m.total.prompt_tokens, m.total.completion_tokens
            )
    out = report(run_id)
    failure = None
    try:
        yield out
    except StepFailed as exc:
        failure = str(exc)
    except BaseException as exc:  # anything else (Ctrl-C too) fails the run, recorded
        failure = f"stopped by {type(exc).__name__}: {exc}".rstrip(": ")
        raise
    finally:
        if failure is not None:
            out.status = "failed"
            out.errors.append(failure)
        out.tokens = meter.summary() if meter is not None else {}
        out.seconds = round(time.monotonic() - started, 3)
        if book is not None and run_id is not None:
            book.finish(run_id, out)


class Runner:
    """Runs one pipeline run (see the module doc); `progress` is what its pipeline sends every
    event through, the runner's own and its apply's."""

    def __init__(
        self,
        lock: RunLock,
        meter: TokenMeter,
        llm: LLM | None,
        no_llm: str,
        progress: Progress | None = None,
    ):
        self.lock = lock
        self.meter = meter
        self.llm = llm
        self.no_llm = no_llm  # why there is no LLM, when `llm` is None (said once in the report)
        self.progress: Progress = progress or (lambda event: None)
        self.reports: list[StepReport] = []  # every step this run ran

    def run(
        self, book: Book[R] | None, report: Callable[[int | None], R], steps: Callable[[R], str]
    ) -> R:
        """One run: `report(run_id)` makes its report (no id: not recorded), `steps` fill it and
        say how they ended (`done`, `nothing`, `planned`, ...): the run's status, set here."""
        with self.lock, recorded(book, report, self.meter) as out:
            status = steps(out)
            if self.llm is None and status in ("done", "nothing") and self._skipped():
                status, out.reason = "skipped", self.no_llm.removeprefix("skipped: ")
            out.status = status
        return out

    def skips(self, step: Step[Any, Any]) -> bool:
        """An LLM step without an LLM: skipped, its note `NO_LLM_NOTE`."""
        return step.kind == "llm" and self.llm is None

    @contextmanager
    def step(
        self, step: Step[Any, Any], ctx: Scope, rep: StepReport
    ) -> Iterator[Callable[[], None]]:
        """Runs the block as `step`: its start event first; an exception marks `rep` failed and
        goes on; `rep` is measured however it ends. Yields `end`, which measures and sends the
        end event (its pipeline says where, and what an exception from it means)."""
        before, t0, ended = ctx.meter.total, time.monotonic(), False
        ctx.step, ctx.schema, ctx.cuts = step.prompt, step.schema, []
        self.reports.append(rep)

        def measure() -> None:
            spent = ctx.meter.total
            rep.tokens_in = spent.prompt_tokens - before.prompt_tokens
            rep.tokens_out = spent.completion_tokens - before.completion_tokens
            rep.seconds = round(time.monotonic() - t0, 3)
            rep.cuts = cut_note(ctx.cuts)
            if step.prompt in ctx.prompts:
                rep.prompt = f"{step.prompt}@{ctx.prompts[step.prompt]}"

        def end() -> None:
            nonlocal ended
            ended = True
            measure()
            self.progress(StepEvent(step.name, step.n, "end", rep))

        try:
            self.progress(StepEvent(step.name, step.n, "start"))
            yield end
        except Exception as exc:
            rep.status, rep.error = "failed", f"{type(exc).__name__}: {exc}"
            raise
        finally:
            if not ended:
                measure()

    def _skipped(self) -> bool:
        return any(r.status == "skipped" for r in self.reports)
