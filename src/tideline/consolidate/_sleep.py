"""`Sleep`: the fourteen steps of the seed, computed without the write lock, applied at once.

    read (no lock) ─▶ steps 1–14 build ONE changeset (minutes of LLM time) ─▶ apply (one short
    transaction, version-checked) ─▶ post: fact index + themes (non-critical) ─▶ run record

- Atomic, at-least-once: a failure at any step (an LLM error, a bad answer twice, the token
  budget, an exception at a step boundary) applies nothing, so every session stays unprocessed
  and the next run redoes it. Only `Profile.apply` writes the profile, once.
- Without freezing the agent: the LLM is never waited on under a lock; writers (`sync_turn`,
  `memory_write`) only ever wait for the short apply.
- If the profile changed while computing (a person rejected a fact, ...), the run recomputes
  once from a fresh read; a second change aborts it cleanly (recorded, nothing applied).
- The run's lifecycle is the runner's (`tideline.runs`): one sleep at a time, a run left
  `running` by a killed process marked failed by the next one, the record, the token meter, each
  step's report and progress; this module keeps the steps, the apply and the one recompute.
- Without an LLM the LLM steps are skipped and the run is `skipped`, its reason said once; the
  rule steps (fast path, maturity, expiry, dedupe, snapshot) still run and what they change is
  applied. A run with nothing new to read is `nothing` (recorded `skipped`: it did nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

from tideline.consolidate import _extract, _integrate, _maintain, _portray, _post, _validate
from tideline.consolidate._prompts import prompt
from tideline.consolidate._schemas import (
    Arbitration,
    Behaviour,
    Classification,
    Edges,
    Extraction,
    TrajectoryOut,
    UserModelOut,
    Verification,
)
from tideline.consolidate._sleep_context import Ctx, SleepLimits
from tideline.consolidate._sleep_report import SleepReport
from tideline.embed import Embedder
from tideline.errors import InputTooLong, ProfileChanged, SleepBusy, SleepTimeout, StepFailed
from tideline.llm import LLM, NO_LLM, NO_LLM_NOTE, TokenMeter
from tideline.memory import Memory
from tideline.profile import Applied, Profile
from tideline.runs import Book, Outcome, Progress, RunLock, Runner, Step, StepEvent, StepReport

SleepStep = Step[Ctx, Outcome]

STEPS: tuple[SleepStep, ...] = (
    Step(1, "load", "rule", run=_extract.load),
    Step(2, "extract", "llm+rule", "extract", _extract.extract, Extraction),
    Step(3, "behaviour", "llm", "behaviour", _integrate.behaviour, Behaviour),
    Step(4, "classify", "llm", "classify", _integrate.classify, Classification),
    Step(5, "cross_validate", "llm+rule", "verify", _validate.cross_validate, Verification),
    Step(6, "arbitrate", "llm+rule", "arbitrate", _validate.arbitrate, Arbitration),
    Step(7, "edges", "llm+rule", "edges", _maintain.edges, Edges),
    Step(8, "maturity", "rule", run=_maintain.maturity),
    Step(9, "expiry", "rule", run=_maintain.expiry),
    Step(10, "user_model", "llm+rule", "user_model", _portray.user_model, UserModelOut),
    Step(11, "trajectory", "llm+rule", "trajectory", _portray.trajectory, TrajectoryOut),
    Step(12, "dedupe", "rule", run=_maintain.dedupe),
    Step(13, "snapshot", "rule", run=_portray.snapshot),
    Step(14, "mark_processed", "rule", run=_portray.mark_processed),
)
LLM_STEPS = tuple(s.prompt for s in STEPS if s.prompt)
#: What a run's report status is recorded as (anything else: `failed`).
RECORDED = {"done": "done", "nothing": "skipped", "skipped": "skipped"}


def prompt_versions() -> dict[str, int]:
    """The version of every LLM step's prompt (what a run record stores)."""
    return {step: prompt(step).version for step in LLM_STEPS}


class Sleep:
    """Consolidates unprocessed sessions into the profile (see the module doc)."""

    def __init__(
        self,
        profile: Profile,
        memory: Memory,
        llm: LLM | None,
        limits: SleepLimits,
        *,
        embedder: Embedder | None = None,
        no_llm: str = NO_LLM,
    ):
        self.profile = profile
        self.memory = memory
        self.llm = llm
        self.embedder = embedder
        self.no_llm = no_llm  # why there is no LLM, when `llm` is None (said once in the report)
        self.limits = limits

    def run(
        self, *, dry_run: bool = False, progress: Progress | None = None, timeout: float = 0
    ) -> SleepReport:
        """One sleep. `dry_run`: compute the changeset and report its plan, apply nothing.
        `timeout` (seconds, 0: none) is checked before each step: a run past it fails there,
        nothing applied (an LLM call in flight finishes first, within `llm_timeout`)."""
        runner = Runner(
            RunLock(self.profile.db, "sleep", SleepBusy),
            TokenMeter(self.limits.run_budget, self.limits.run_max_calls),
            self.llm,
            self.no_llm,
            _bounded(progress or (lambda event: None), timeout),
        )
        book = Book[SleepReport](
            self.profile.close_interrupted_runs,
            lambda: self.profile.start_run(prompt_versions()),
            self.profile.record_run_tokens,
            self._finish,
        )
        llm = self.llm.name if self.llm else NO_LLM
        return runner.run(
            None if dry_run else book,
            lambda run_id: SleepReport(run_id, dry_run, llm=llm),
            lambda report: self._steps(runner, report),
        )

    def _steps(self, runner: Runner, report: SleepReport) -> str:
        """Compute, then apply; computed once more when the LLM server turned out to have a
        smaller window than the input cap, or the profile changed meanwhile (not both). How
        the run ended: `planned`, `nothing`, `aborted` or `done` (the runner sets it)."""
        ended = self._attempt(runner, report, last=False)
        if isinstance(ended, _Again):
            report.notes.append(ended.why)
            ended = self._attempt(runner, report, last=True)
        assert not isinstance(ended, _Again)
        return ended

    def _attempt(self, runner: Runner, report: SleepReport, *, last: bool) -> str | _Again:
        """One computation and, unless a dry run or there is nothing new, its apply: how the
        run ended, or why it must be computed again (never when `last`)."""
        ctx = Ctx(self.profile, self.memory, self.llm, runner.meter, self.limits)
        report.steps = ctx.reports
        room = self._room()
        try:
            for step in STEPS:
                self._step(runner, step, ctx)
        except StepFailed as exc:
            if last or not _window_learnt(exc, room, self._room()):
                raise
            return _Again(
                "the LLM server's context window is smaller than the input cap; "
                "recomputed once with prompts sized to it"
            )
        report.plan = ctx.work.plan()
        if report.dry_run or not len(ctx.work):
            return "planned" if report.dry_run else "nothing"
        try:
            applied = self._apply(ctx, report.run_id, runner.progress)
        except ProfileChanged as exc:
            if not last:
                return _Again("the profile changed while computing; recomputed once")
            report.errors.append(f"aborted, nothing applied: {exc}")
            return "aborted"
        report.version, report.applied = applied.version, dict(applied.counts)
        report.post = self._post(runner, ctx)
        return "done"

    def _step(self, runner: Runner, step: SleepStep, ctx: Ctx) -> None:
        rep = StepReport(step.n, step.name, step.kind)
        ctx.reports.append(rep)
        try:
            with runner.step(step, ctx, rep) as end:
                assert step.run is not None
                rep.take(
                    Outcome(note=NO_LLM_NOTE, status="skipped")
                    if runner.skips(step)
                    else step.run(ctx)
                )
        except Exception as exc:
            raise StepFailed(f"step {step.n} {step.name} failed, nothing applied: {exc}") from exc
        try:
            end()
        except Exception as exc:
            raise StepFailed(f"after step {step.n} {step.name}, nothing applied: {exc}") from exc

    def _apply(self, ctx: Ctx, run_id: int | None, progress: Progress) -> Applied:
        try:
            progress(StepEvent("apply", 0, "start"))
        except Exception as exc:
            raise StepFailed(f"before apply, nothing applied: {exc}") from exc
        try:
            applied = self.profile.apply(ctx.work, run_id=run_id)
        except ProfileChanged:
            raise
        except Exception as exc:
            raise StepFailed(f"apply failed, nothing applied: {exc}") from exc
        try:
            progress(StepEvent("apply", 0, "end"))
        except Exception as exc:  # the changes are in: record, never undo
            ctx.reports.append(StepReport(0, "apply", "rule", "failed", error=str(exc)))
        return applied

    def _post(self, runner: Runner, ctx: Ctx) -> list[StepReport]:
        """Post-transaction tasks: failures are recorded in their report, never raised."""
        tasks: tuple[tuple[str, Callable[[], Outcome]], ...] = (
            ("index_facts", lambda: _post.index_facts(self.profile, self.embedder)),
            ("themes", lambda: _post.themes(self.profile)),
        )
        out = []
        for name, task in tasks:
            rep = StepReport(0, name, "rule")
            with suppress(Exception), runner.step(SleepStep(0, name, "rule"), ctx, rep) as end:
                rep.take(task())  # a failure is in the task's report
                end()
            out.append(rep)
        return out

    def _finish(self, run_id: int, report: SleepReport) -> None:
        post_errors = [f"{s.name}: {s.error}" for s in report.post if s.error]
        self.profile.finish_run(
            run_id,
            RECORDED.get(report.status, "failed"),
            steps=[s.to_dict() for s in report.steps + report.post],
            tokens_in=int(report.tokens["prompt_tokens"]),
            tokens_out=int(report.tokens["completion_tokens"]),
            errors=report.errors + post_errors,
            version=report.version,
        )

    def _room(self) -> int:
        return self.llm.room("") if self.llm is not None else 0


@dataclass(frozen=True)
class _Again:
    """Why a run computes once more (said in its report's notes)."""

    why: str


def _bounded(progress: Progress, timeout: float) -> Progress:
    """`progress`, raising at the start of a step once `timeout` seconds have passed."""
    if timeout <= 0:
        return progress
    deadline = time.monotonic() + timeout

    def check(event: StepEvent) -> None:
        if event.phase == "start" and event.n and time.monotonic() > deadline:
            raise SleepTimeout(
                f"the run took longer than its {timeout:g} s timeout; allow it more "
                "(`tideline sleep --timeout`, TIDELINE_SLEEP_ON_EXIT_TIMEOUT) or run it again"
            )
        progress(event)

    return check


def _window_learnt(exc: StepFailed, room_before: int, room_now: int) -> bool:
    """A step refused as too long by the server itself, which so taught its smaller window."""
    return isinstance(exc.__cause__, InputTooLong) and room_now < room_before
