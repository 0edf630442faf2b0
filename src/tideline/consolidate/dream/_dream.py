"""`Dream`: the daily LLM layer — solidify → sleep → scripts → comb → drift → dream.

    solidify  the day's unindexed turns → narratives linked to them       (Layer 0, LLM)
    sleep     the profile: the existing Sleep pipeline, with what is left of the budget
    scripts   topics, weights, clusters, entity graph (no LLM)
    comb      re-weigh, self-concept, conflicts, threads                 (Layer 1, LLM)
    drift     one heavy memory → unrelated territory → a connection?     (Layer 2, LLM)
    dream     3–5 symbols → a story → a reflection, importance 1         (Layer 3, LLM)

- Each layer is its own transaction, its `done` record inside it: a layer's results and the
  record saying it is done land together. A layer done for a day is never redone for that day;
  a layer that failed, was skipped (no LLM) or was stopped by the budget is retried next run.
- The first layer that fails stops the run (later layers read earlier ones' results); the layers
  before it keep their results. The run record says which layer failed and why.
- One `TokenMeter` per run, budget `dream_run_budget`: every call is checked before it is sent;
  Sleep gets what is left. A call that would pass the budget stops the run cleanly (status
  `stopped`, nothing of that layer written).
- Computing (the model's minutes) holds no lock; only the writes take the database.
- The run's lifecycle is the runner's (`tideline.runs`): one dream at a time per database
  (`<db>.dream.lock`), a run left `running` by a killed process marked failed by the next one,
  the record, the meter, each layer's report and progress; this module keeps the layers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tideline.analysis.scripts import run_all
from tideline.clock import now_text
from tideline.consolidate._sleep import Sleep
from tideline.consolidate.dream import _comb, _drift, _solidify, _symbolic
from tideline.consolidate.dream._answers import Digest, DreamOut, DriftOut, Solidified
from tideline.consolidate.dream._basis import Basis
from tideline.consolidate.dream._concept import held
from tideline.consolidate.dream._dream_migrations import DREAM_MIGRATIONS
from tideline.consolidate.dream._dream_prompts import dream_prompt
from tideline.consolidate.dream._dream_report import DreamReport, LayerReport
from tideline.consolidate.dream._dream_runs import LAYER_NAMES, DreamRun, DreamRuns, LayerRecord
from tideline.consolidate.dream._layer_context import (
    Day,
    DreamLimits,
    LayerCtx,
    Plan,
    Stores,
    Writer,
)
from tideline.consolidate.dream._threads import Thread, Threads
from tideline.embed import Embedder
from tideline.errors import BudgetExceeded, DreamBusy, InvalidInput, LayerFailed, NotFound
from tideline.llm import LLM, NO_LLM, NO_LLM_NOTE, TokenMeter, Usage
from tideline.memory import Memory, Narrative
from tideline.profile import Profile
from tideline.runs import Book, Progress, RunLock, Runner, Step

#: A layer: a step of the runner's whose `run` computes its plan (sleep and scripts: the
#: pipeline runs those itself).
Layer = Step[LayerCtx, Plan]

LAYERS: tuple[Layer, ...] = (
    Layer(1, "solidify", "llm", _solidify.PROMPT, _solidify.compute, Solidified),
    Layer(2, "sleep", "llm+rule"),
    Layer(3, "scripts", "rule"),
    Layer(4, "comb", "llm", _comb.PROMPT, _comb.compute, Digest),
    Layer(5, "drift", "llm", _drift.PROMPT, _drift.compute, DriftOut),
    Layer(6, "dream", "llm", _symbolic.PROMPT, _symbolic.compute, DreamOut),
)
if tuple(layer.name for layer in LAYERS) != LAYER_NAMES:  # the drivers offer `_dream_runs`' list
    raise ImportError(f"DREAM's layers {[layer.name for layer in LAYERS]} differ from LAYER_NAMES")


@dataclass
class SelfConcept:
    """One reflection of the self-concept and the memories it rests on (for T0)."""

    narrative: Narrative
    rests_on: list[int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_layers(layers: Iterable[str] | None) -> list[Layer]:
    """The layers to run, always in pipeline order; unknown names are an error."""
    if layers is None:
        return list(LAYERS)
    names = [n.strip() for n in ([layers] if isinstance(layers, str) else layers)]
    names = [p.strip() for n in names for p in n.split(",") if p.strip()]
    unknown = sorted(set(names) - set(LAYER_NAMES))
    if unknown or not names:
        raise InvalidInput(f"layers {unknown or names}: choose from {list(LAYER_NAMES)}")
    return [layer for layer in LAYERS if layer.name in names]


class Dream:
    """The daily dream pipeline of one agent (see the module doc)."""

    def __init__(
        self,
        profile: Profile,
        memory: Memory,
        llm: LLM | None,
        limits: DreamLimits,
        *,
        sleep: Callable[[int, int], Sleep],
        embedder: Embedder | None = None,
        no_llm: str = NO_LLM,
    ):
        self.profile = profile
        self.memory = memory
        self.llm = llm
        # The sleep layer's pipeline, built by the composition root for (tokens, calls) left.
        self.sleep_for = sleep
        self.embedder = embedder
        self.run_budget = max(0, limits.run_budget)
        self.run_max_calls = max(0, limits.run_max_calls)
        self.no_llm = no_llm  # why there is no LLM, when `llm` is None (said once in the report)
        self.limits = limits
        db = memory.db
        with memory.lock:
            DREAM_MIGRATIONS.apply(db)
        self.stores = Stores(DreamRuns(db), Threads(db), Basis(db))

    # -- reads for injection and the drivers ------------------------------------------------
    def threads(self, status: str | None = "open", limit: int = 50) -> list[Thread]:
        """Threads, most recently touched first (T3 lists the open ones)."""
        with self.memory.lock:
            return self.stores.threads.select(status, limit)

    def self_concept(self, limit: int = 5) -> list[SelfConcept]:
        """The latest distinct waking reflections, newest first, each with the memories it
        rests on (T0; a dream's reflection feeds combing, not this — see `_concept`)."""
        with self.memory.lock:
            found = held(self.memory, self.stores.basis, limit)
        return [SelfConcept(n, rests_on) for n, rests_on in found]

    def open_thread(self, title: str, why: str, memories: Sequence[int]) -> Thread:
        """Open a thread by hand (an MCP client's model combing, a person): like combing's, it
        rests on memories that exist."""
        with self.memory.lock, self.memory.db.transaction():
            if not memories:
                raise InvalidInput(
                    "a thread needs the memories that raised it: pass their ids (memories=[...])"
                )
            self._require_memories(memories)
            tid = self.stores.threads.open(title, why, memories, now=self._now(), run_id=None)
            return self.stores.threads.require(tid)

    def touch_thread(self, thread_id: int, note: str, memories: Sequence[int] = ()) -> Thread:
        """Note that a thread moved (a note, more memories); an open thread only."""
        with self.memory.lock, self.memory.db.transaction():
            self._require_open(thread_id)
            self._require_memories(memories)
            self.stores.threads.touch(thread_id, note, memories, now=self._now())
            return self.stores.threads.require(thread_id)

    def close_thread(self, thread_id: int, status: str = "resolved", why: str = "") -> Thread:
        """Close an open thread as `resolved` or `dropped` (it is kept, never deleted)."""
        with self.memory.lock, self.memory.db.transaction():
            self._require_open(thread_id)
            self.stores.threads.close(thread_id, status, why, now=self._now())
            return self.stores.threads.require(thread_id)

    def _now(self) -> str:
        return now_text(self.memory.clock)

    def _require_open(self, thread_id: int) -> None:
        thread = self.stores.threads.require(thread_id)
        if thread.status != "open":
            raise InvalidInput(
                f"thread {thread_id} is already {thread.status}; open a new thread instead"
            )

    def _require_memories(self, ids: Sequence[int]) -> None:
        found = {n.id for n in self.memory.narratives.get(list(ids), links=False)}
        missing = sorted(set(ids) - found)
        if missing:
            raise NotFound(f"memories {missing} do not exist; find ids with memory_search")

    def runs(self, limit: int = 20) -> list[DreamRun]:
        with self.memory.lock:
            return self.stores.runs.recent(limit)

    def prompt_inputs(self, name: str, date: str | None = None) -> dict[str, str]:
        """Today's inputs of one dream prompt (for `render_prompt`, an MCP client running a
        layer by hand): what the pipeline's layer would send, in one piece."""
        info = dream_prompt(name)
        ctx = self._ctx(Day.of(date, self.memory.clock), TokenMeter(), None)
        with self.memory.lock:
            return self._inputs(info.name, ctx)

    def _inputs(self, name: str, ctx: LayerCtx) -> dict[str, str]:
        if name == _solidify.PROMPT:
            return _solidify.inputs(ctx, _solidify.day_scan(ctx))
        if name == _comb.PROMPT:
            return _comb.inputs(ctx)[0]
        if name == _symbolic.PROMPT:
            return _symbolic.inputs(ctx, _symbolic.memories(ctx))
        terrain = _drift.Terrain(ctx)
        start = _drift.seed(ctx, terrain)
        if start is None:
            raise InvalidInput("no lived memory to drift from yet; write or solidify some first")
        return _drift.inputs(ctx, terrain, _drift.walk(terrain, start.id, self.limits.drift_hops))

    # -- the run ----------------------------------------------------------------------------
    def run(
        self,
        date: str | None = None,
        layers: Sequence[str] | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> DreamReport:
        """Dream one day (default: today, UTC). `layers`: a subset, run in pipeline order;
        `dry_run`: compute (LLM calls included) and report, write and record nothing."""
        day, chosen = Day.of(date, self.memory.clock), choose_layers(layers)
        runner = Runner(
            RunLock(self.memory.db, "dream", DreamBusy),
            TokenMeter(self.run_budget, self.run_max_calls),
            self.llm,
            self.no_llm,
            progress,
        )
        book = Book[DreamReport](
            self._close_interrupted,
            lambda: self._start(day, chosen),
            self._spent,
            self._finish,
        )
        llm = self.llm.name if self.llm else "none"
        return runner.run(
            None if dry_run else book,
            lambda run_id: DreamReport(day.label, run_id, dry_run, llm=llm, budget=self.run_budget),
            lambda report: self._layers(runner, report, day, chosen),
        )

    def _ctx(self, day: Day, meter: TokenMeter, run_id: int | None) -> LayerCtx:
        return LayerCtx(
            self.memory, self.profile, self.llm, meter, day, self.stores, self.limits, run_id
        )

    def _layers(self, runner: Runner, report: DreamReport, day: Day, chosen: list[Layer]) -> str:
        """The chosen layers in order, each its own transaction; the first that fails or is
        stopped stops the run, a layer done for the day by an earlier run is not redone. How
        the run ended: `planned`, `done`, or the status of the layer that stopped it."""
        finished = {}
        if not report.dry_run:
            with self.memory.lock:
                finished = self.stores.runs.finished(day.label)
        ctx = self._ctx(day, runner.meter, report.run_id)
        stop: LayerReport | None = None
        for layer in chosen:
            if stop is not None:
                report.layers.append(
                    LayerReport(
                        layer.n,
                        layer.name,
                        layer.kind,
                        "pending",
                        note=f"not run: {stop.name} {stop.status}",
                    )
                )
            elif layer.name in finished:
                report.layers.append(
                    LayerReport(
                        layer.n,
                        layer.name,
                        layer.kind,
                        "earlier",
                        note=f"done for {day.label} by run #{finished[layer.name]}",
                    )
                )
            else:
                rep = self._layer(runner, layer, ctx, report.dry_run)
                report.layers.append(rep)
                if rep.status in ("failed", "stopped"):
                    stop = rep
        if stop is not None:
            report.errors.append(f"layer {stop.name} {stop.status}: {stop.error}")
        return "planned" if report.dry_run else "done" if stop is None else stop.status

    def _layer(self, runner: Runner, layer: Layer, ctx: LayerCtx, dry_run: bool) -> LayerReport:
        rep = LayerReport(layer.n, layer.name, layer.kind)
        if layer.prompt:
            rep.prompt = f"{layer.prompt}@{dream_prompt(layer.prompt).version}"
        try:
            with runner.step(layer, ctx, rep) as end:
                plan = self._compute(runner, layer, ctx, dry_run)
                rep.take(plan)
                rep.detail = plan.detail
                if dry_run or plan.status != "done":
                    end()
                else:
                    with self.memory.lock, self.memory.db.transaction():
                        writer = Writer(ctx)
                        if plan.apply is not None:
                            rep.changes.update(plan.apply(writer))
                        rep.written = writer.written
                        end()  # raising undoes the layer
                        self.stores.runs.record_layer(self._record(ctx, rep))
                    return rep
        except Exception as exc:  # the runner marked the layer failed; the budget stops it
            rep.written = {}
            if isinstance(exc, BudgetExceeded):
                rep.status, rep.error = "stopped", f"budget: {exc}"
        if not dry_run:
            with self.memory.lock:
                self.stores.runs.record_layer(self._record(ctx, rep))
        return rep

    def _compute(self, runner: Runner, layer: Layer, ctx: LayerCtx, dry_run: bool) -> Plan:
        if layer.name == "sleep":
            return self._sleep(ctx, dry_run)
        if layer.name == "scripts":
            if dry_run:
                return Plan(
                    note="dry run: the script layer writes, so it did not run", status="skipped"
                )
            found = run_all(self.memory)
            changed = {
                k: 1 for k, v in found.steps.items() if v.get("changed") or v.get("weights_changed")
            }
            return Plan({"narratives": found.narratives, **changed})
        if runner.skips(layer):
            return Plan(note=NO_LLM_NOTE, status="skipped")
        assert layer.run is not None
        return layer.run(ctx)

    def _sleep(self, ctx: LayerCtx, dry_run: bool) -> Plan:
        """The existing Sleep, with what is left of this run's budget; its tokens count here."""
        left = 0
        if self.run_budget:
            left = self.run_budget - ctx.meter.total.total
            if left <= 0:
                raise BudgetExceeded(
                    f"sleep: the run's {self.run_budget}-token budget is spent; raise "
                    "TIDELINE_DREAM_RUN_BUDGET"
                )
        calls = max(1, self.run_max_calls - ctx.meter.calls) if self.run_max_calls else 0
        sleep = self.sleep_for(left, calls)
        found = sleep.run(dry_run=dry_run)
        tokens = found.tokens
        if found.status == "skipped":  # no LLM: its rule steps ran; retried by the next run
            return Plan(dict(found.applied), f"sleep run #{found.run_id} {NO_LLM_NOTE}", "skipped")
        ctx.meter.record(
            "sleep",
            Usage(int(tokens.get("prompt_tokens", 0)), int(tokens.get("completion_tokens", 0))),
        )
        if not found.ok:
            failed = next((s for s in found.steps if s.status == "failed"), None)
            if failed is not None and failed.error.startswith("BudgetExceeded"):
                raise BudgetExceeded(f"sleep step {failed.name}: {failed.error}")
            raise LayerFailed(
                f"sleep run #{found.run_id} {found.status}: {'; '.join(found.errors)}"
            )
        skipped = ", ".join(sorted(found.skipped))
        note = f"sleep run #{found.run_id} {found.status}" + (
            f"; skipped {skipped}" if skipped else ""
        )
        return Plan(dict(found.applied or found.plan), note)

    def _close_interrupted(self) -> None:
        with self.memory.lock:
            self.stores.runs.log.close_interrupted(self._now())

    def _start(self, day: Day, chosen: list[Layer]) -> int:
        prompts = {p: dream_prompt(p).version for p in (x.prompt for x in chosen) if p}
        llm = self.llm.name if self.llm else "none"
        with self.memory.lock:
            return self.stores.runs.start(
                day.label, [x.name for x in chosen], self.run_budget, prompts, llm, self._now()
            )

    def _spent(self, run_id: int, tokens_in: int, tokens_out: int) -> None:
        with self.memory.lock:
            self.stores.runs.log.record_tokens(run_id, tokens_in, tokens_out)

    def _finish(self, run_id: int, report: DreamReport) -> None:
        with self.memory.lock:
            self.stores.runs.finish(
                run_id,
                status=report.status,
                tokens_in=report.tokens_in,
                tokens_out=report.tokens_out,
                seconds=report.seconds,
                errors=report.errors,
                now=self._now(),
            )

    @staticmethod
    def _record(ctx: LayerCtx, rep: LayerReport) -> LayerRecord:
        assert ctx.run_id is not None
        return LayerRecord(
            ctx.run_id,
            ctx.day.label,
            rep.name,
            rep.status,
            rep.seconds,
            rep.tokens_in,
            rep.tokens_out,
            rep.changes,
            rep.written,
            rep.detail,
            rep.note,
            rep.error,
            rep.prompt,
        )
