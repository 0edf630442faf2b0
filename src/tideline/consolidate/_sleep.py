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
- One sleep at a time (`SleepLock`); a run left `running` by a killed process is marked failed
  by the next one.
- Without an LLM the LLM steps are skipped and the run is `skipped`, its reason said once; the
  rule steps (fast path, maturity, expiry, dedupe, snapshot) still run and what they change is
  applied. A run with nothing new to read is `nothing` (recorded `skipped`: it did nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from tideline.config import DEFAULTS as D
from tideline.consolidate import _extract, _integrate, _maintain, _portrait, _post, _validate
from tideline.consolidate._context import Ctx, Limits
from tideline.consolidate._lock import SleepLock
from tideline.consolidate._outcome import Outcome
from tideline.consolidate._prompts import prompt
from tideline.consolidate._report import SleepReport, StepEvent, StepReport, cut_note
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
from tideline.embed import Embedder
from tideline.errors import InputTooLong, ProfileChanged, SleepTimeout, StepFailed
from tideline.llm import LLM, NO_LLM, NO_LLM_NOTE, TokenMeter, Usage
from tideline.memory import Memory
from tideline.profile import Applied, Profile

Progress = Callable[[StepEvent], None]


@dataclass(frozen=True)
class Step:
    n: int
    name: str
    run: Callable[[Ctx], Outcome]
    kind: str  # "rule", "llm" (skipped without one) or "llm+rule" (its rule part always runs)
    llm_step: str | None = None  # the prompt and meter key of its LLM calls
    schema: type[BaseModel] | None = None  # what its LLM calls answer


STEPS: tuple[Step, ...] = (
    Step(1, "load", _extract.load, "rule"),
    Step(2, "extract", _extract.extract, "llm+rule", "extract", Extraction),
    Step(3, "behaviour", _integrate.behaviour, "llm", "behaviour", Behaviour),
    Step(4, "classify", _integrate.classify, "llm", "classify", Classification),
    Step(5, "cross_validate", _validate.cross_validate, "llm+rule", "verify", Verification),
    Step(6, "arbitrate", _validate.arbitrate, "llm+rule", "arbitrate", Arbitration),
    Step(7, "edges", _maintain.edges, "llm+rule", "edges", Edges),
    Step(8, "maturity", _maintain.maturity, "rule"),
    Step(9, "expiry", _maintain.expiry, "rule"),
    Step(10, "user_model", _portrait.user_model, "llm+rule", "user_model", UserModelOut),
    Step(11, "trajectory", _portrait.trajectory, "llm+rule", "trajectory", TrajectoryOut),
    Step(12, "dedupe", _maintain.dedupe, "rule"),
    Step(13, "snapshot", _portrait.snapshot, "rule"),
    Step(14, "mark_processed", _portrait.mark_processed, "rule"),
)
LLM_STEPS = tuple(s.llm_step for s in STEPS if s.llm_step)


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
        *,
        embedder: Embedder | None = None,
        run_budget: int = D.llm_run_budget,
        run_max_calls: int = D.llm_run_max_calls,
        max_input_tokens: int = D.llm_max_input_tokens,
        no_llm: str = NO_LLM,
    ):
        self.profile = profile
        self.memory = memory
        self.llm = llm
        self.embedder = embedder
        self.run_budget = run_budget
        self.run_max_calls = run_max_calls
        self.no_llm = no_llm  # why there is no LLM, when `llm` is None (said once in the report)
        self.limits = Limits(max_input_tokens=max_input_tokens)

    def run(
        self, *, dry_run: bool = False, progress: Progress | None = None, timeout: float = 0
    ) -> SleepReport:
        """One sleep. `dry_run`: compute the changeset and report its plan, apply nothing.
        `timeout` (seconds, 0: none) is checked before each step: a run past it fails there,
        nothing applied (an LLM call in flight finishes first, within `llm_timeout`)."""
        with SleepLock(self.profile.db):
            return self._run(dry_run, _bounded(progress or (lambda event: None), timeout))

    def _run(self, dry_run: bool, progress: Progress) -> SleepReport:
        started = time.monotonic()
        meter = TokenMeter(self.run_budget, self.run_max_calls)
        if not dry_run:
            self._close_interrupted()
        run_id = None if dry_run else self.profile.start_run(prompt_versions())
        if run_id is not None:  # what is spent is recorded as it is spent: a kill keeps it
            meter.on_record = lambda m: self.profile.record_run_tokens(
                run_id, m.total.prompt_tokens, m.total.completion_tokens
            )
        report = SleepReport(run_id, dry_run, llm=self.llm.name if self.llm else NO_LLM)
        applied = None
        try:
            for attempt in (1, 2):
                ctx = Ctx(self.profile, self.memory, self.llm, meter, self.limits)
                report.steps = ctx.reports
                room = self._room()
                try:
                    for step in STEPS:
                        self._step(step, ctx, progress)
                except StepFailed as exc:
                    if attempt == 2 or not _window_learnt(exc, room, self._room()):
                        raise
                    report.notes.append(
                        "the LLM server's context window is smaller than the input cap; "
                        "recomputed once with prompts sized to it"
                    )
                    continue
                report.plan = ctx.work.plan()
                if dry_run:
                    report.status = "planned"
                    break
                if not len(ctx.work):
                    report.status = "nothing"
                    break
                try:
                    applied = self._apply(ctx, run_id, progress)
                    break
                except ProfileChanged as exc:
                    if attempt == 2:
                        report.status = "aborted"
                        report.errors.append(f"aborted, nothing applied: {exc}")
                        break
                    report.notes.append("the profile changed while computing; recomputed once")
            if applied is not None:
                report.status, report.version = "done", applied.version
                report.applied = dict(applied.counts)
                report.post = self._post(progress)
            if self.llm is None and report.status in ("done", "nothing"):
                report.status, report.reason = "skipped", self.no_llm.removeprefix("skipped: ")
        except StepFailed as exc:
            report.status = "failed"
            report.errors.append(str(exc))
        finally:
            report.tokens = meter.summary()
            report.seconds = round(time.monotonic() - started, 3)
            if run_id is not None:
                self._record(report, meter)
        return report

    def _step(self, step: Step, ctx: Ctx, progress: Progress) -> None:
        rep = StepReport(step.n, step.name, step.kind)
        before = _usage(ctx.meter, step.llm_step)
        t0 = time.monotonic()
        ctx.step, ctx.schema, ctx.cuts = step.llm_step, step.schema, []
        try:
            progress(StepEvent(step.name, step.n, "start"))
            if step.kind == "llm" and ctx.llm is None:
                out = Outcome(note=NO_LLM_NOTE, status="skipped")
            else:
                out = step.run(ctx)
            rep.changes, rep.note, rep.status = out.changes, out.note, out.status
            rep.cuts = cut_note(ctx.cuts)
        except Exception as exc:
            rep.status, rep.error = "failed", f"{type(exc).__name__}: {exc}"
            raise StepFailed(f"step {step.n} {step.name} failed, nothing applied: {exc}") from exc
        finally:
            used = _usage(ctx.meter, step.llm_step)
            rep.tokens_in = used.prompt_tokens - before.prompt_tokens
            rep.tokens_out = used.completion_tokens - before.completion_tokens
            rep.seconds = round(time.monotonic() - t0, 3)
            if step.llm_step in ctx.prompts:
                rep.prompt = f"{step.llm_step}@{ctx.prompts[step.llm_step]}"
            ctx.reports.append(rep)
        try:
            progress(StepEvent(step.name, step.n, "end", rep))
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

    def _post(self, progress: Progress) -> list[StepReport]:
        """Post-transaction tasks: failures are recorded in their report, never raised."""
        out = []
        tasks: tuple[tuple[str, Callable[[], Outcome]], ...] = (
            ("index_facts", lambda: _post.index_facts(self.profile, self.embedder)),
            ("themes", lambda: _post.themes(self.profile)),
        )
        for name, task in tasks:
            rep = StepReport(0, name, "rule")
            t0 = time.monotonic()
            try:
                progress(StepEvent(name, 0, "start"))
                done = task()
                rep.changes, rep.note, rep.status = done.changes, done.note, done.status
                progress(StepEvent(name, 0, "end", rep))
            except Exception as exc:
                rep.status, rep.error = "failed", f"{type(exc).__name__}: {exc}"
            rep.seconds = round(time.monotonic() - t0, 3)
            out.append(rep)
        return out

    def _record(self, report: SleepReport, meter: TokenMeter) -> None:
        assert report.run_id is not None
        total = meter.total
        errors = report.errors + [f"{s.name}: {s.error}" for s in report.post if s.error]
        stored = {"done": "done", "nothing": "skipped", "skipped": "skipped"}
        self.profile.finish_run(
            report.run_id,
            stored.get(report.status, "failed"),
            steps=[s.to_dict() for s in report.steps + report.post],
            tokens_in=total.prompt_tokens,
            tokens_out=total.completion_tokens,
            errors=errors,
            version=report.version,
        )

    def _room(self) -> int:
        return self.llm.room("") if self.llm is not None else 0

    def _close_interrupted(self) -> None:
        """Runs still `running` while we hold the lock were killed mid-way: say so."""
        self.profile.close_interrupted_runs()


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


def _usage(meter: TokenMeter, step: str | None) -> Usage:
    return meter.steps.get(step, Usage()) if step else Usage()
