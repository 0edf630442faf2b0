"""What the layers of one dream run share: the day, the services, the meter, the stores.

A layer works in two phases. `compute(ctx)` reads and asks the model (no lock held, minutes
possibly) and returns a `Plan`: what it found and a closure that writes it. The runner calls that
closure inside ONE transaction together with the layer's `done` record — so a layer's results and
its record land together or not at all — and skips it in a dry run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from tideline.clock import Clock, now_text, parse_time
from tideline.consolidate.dream._basis import Basis
from tideline.consolidate.dream._dream_prompts import dream_prompt, render_prompt
from tideline.consolidate.dream._dream_runs import DreamRuns
from tideline.consolidate.dream._threads import Threads
from tideline.llm import LLM, TokenMeter
from tideline.memory import Memory, Narrative
from tideline.profile import Profile
from tideline.runs import Outcome

M = TypeVar("M", bound=BaseModel)
MAX_LINKS = 1000  # narratives hold at most 1,000 source links (docs/memory.md)


@dataclass(frozen=True)
class Day:
    """One UTC day: the unit a dream run works on and records (`clock`: what "now" is)."""

    date: dt.date
    clock: Clock = field(compare=False, repr=False)

    @classmethod
    def of(cls, value: str | dt.date | None, clock: Clock) -> Day:
        if value is None:
            return cls(clock().date(), clock)
        if isinstance(value, dt.date):
            return cls(value, clock)
        stamp = parse_time(value, "date")
        assert stamp is not None
        return cls(dt.date.fromisoformat(stamp[:10]), clock)

    @property
    def label(self) -> str:
        return self.date.isoformat()

    @property
    def start(self) -> str:
        return f"{self.label}T00:00:00Z"

    @property
    def end(self) -> str:
        """The next day's start (exclusive)."""
        return f"{(self.date + dt.timedelta(days=1)).isoformat()}T00:00:00Z"

    @property
    def before(self) -> str:
        """The last second of the day before (the scanner's cutoff is exclusive)."""
        return f"{(self.date - dt.timedelta(days=1)).isoformat()}T23:59:59Z"

    def stamp(self) -> str:
        """When what a layer writes happened: now, or the day's last second for a past day, so
        the memories of a day belong to it."""
        return min(now_text(self.clock), f"{self.label}T23:59:59Z")


@dataclass
class Stores:
    runs: DreamRuns
    threads: Threads
    basis: Basis


@dataclass(frozen=True)
class DreamLimits:
    """The dream's section of the settings, built in `app.py` (`dream_limits`): field `<name>`
    is the setting `dream_<name>`; the calls and the input of one call are the LLM's
    (`llm_run_max_calls`, `llm_max_input_tokens`)."""

    run_budget: int  # tokens one run may spend in all, its sleep layer's included (0: none)
    run_max_calls: int  # LLM calls one run may make (0: no limit)
    max_input_tokens: int  # the input of one call
    comb_memories: int  # memories the comb re-weighs at most
    drift_hops: int  # steps of the night drift's walk


@dataclass
class Writer:
    """What a plan's closure writes with, and the ids it wrote (by kind)."""

    ctx: LayerCtx
    written: dict[str, list[int]] = field(default_factory=dict)

    def add(self, kind: str, ident: int) -> int:
        self.written.setdefault(kind, []).append(ident)
        return ident

    def narrative(self, kind: str, rests_on: Sequence[int] = (), **fields: Any) -> int:
        """Write one narrative through the normal write path (validation, recurrence,
        anti-inflation) stamped in the day; a reflection or dream also records its grounds and
        links to their source turns."""
        memory = self.ctx.memory
        if rests_on and "source_links" not in fields:
            fields["source_links"] = grounds_links(memory.narratives.get(list(rests_on)))
        fields.setdefault("created_at", self.ctx.day.stamp())
        n = memory.write(kind=kind, **fields)
        if rests_on:
            self.ctx.stores.basis.add(n.id, list(rests_on))
        return self.add(
            {"narrative": "narratives", "reflection": "reflections"}.get(kind, "dreams"), n.id
        )


Apply = Callable[[Writer], dict[str, int]]


@dataclass
class Plan(Outcome):
    """A layer's computed result: counts, a note, a status (skipped: not finished, retried next
    run), and the writes (None: nothing to write)."""

    apply: Apply | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class LayerCtx:
    memory: Memory
    profile: Profile
    llm: LLM | None
    meter: TokenMeter
    day: Day
    stores: Stores
    limits: DreamLimits
    run_id: int | None = None
    prompts: dict[str, int] = field(default_factory=dict)
    step: str | None = None  # the layer's prompt now running, and its answer's schema (`room`)
    schema: type[BaseModel] | None = None
    cuts: list[str] = field(default_factory=list)  # what answers had over their caps

    def ask(self, name: str, inputs: Mapping[str, str], schema: type[M], max_tokens: int) -> M:
        """One structured call of a dream prompt, rendered with `inputs`."""
        assert self.llm is not None
        rendered = render_prompt(name, inputs)
        self.prompts[name] = rendered.version
        result = self.llm.complete(
            rendered.messages, schema=schema, step=name, max_tokens=max_tokens, meter=self.meter
        )
        self.cuts += result.cuts
        data: M = result.data
        return data

    def room(self, share: float) -> int:
        """Tokens a part of one prompt may take: a share of what the input cap leaves once the
        layer's instructions, schema and framing are counted."""
        cap = self.limits.max_input_tokens
        if self.llm is not None and self.step is not None:
            empty = {name: "" for name in dream_prompt(self.step).inputs}
            system = render_prompt(self.step, empty).system
            cap = min(cap, self.llm.room(system, self.schema))
        return int(cap * share)


def grounds_links(narratives: Sequence[Narrative]) -> list[int]:
    """The source turns of these memories, for a narrative that rests on them (capped)."""
    return sorted({t for n in narratives for t in n.source_links})[:MAX_LINKS]


def memory_line(n: Narrative, text_chars: int = 300) -> str:
    """How a memory reads in the dream prompts: id, day, kind, weight and scores, words."""
    ctx = " ".join(n.context.split())[:text_chars]
    tags = f" tags: {', '.join(n.tags)}" if n.tags else ""
    return (
        f"[{n.id}] {n.created_at[:10]} {n.kind} w={n.weight:.2f} (imp {n.importance}, emo "
        f"{n.emotional}, unr {n.unresolved}) {n.gesture}" + (f" — {ctx}" if ctx else "") + tags
    )
