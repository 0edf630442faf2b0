"""What the steps of one Sleep computation share: the read, the working changeset, the LLM.

A `Ctx` lives for one computation (a redo after `ProfileChanged` builds a new one). Steps read
and add to it in order; nothing here touches the database except through the services' reads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from tideline.consolidate._prompts import prompt
from tideline.consolidate._working import Working
from tideline.embed import estimate_tokens
from tideline.llm import LLM, TokenMeter
from tideline.memory import Memory, Turn
from tideline.profile import (
    Event,
    Fact,
    ObservationDraft,
    Profile,
    Ref,
    SessionDigest,
    Trajectory,
)
from tideline.runs import StepReport

M = TypeVar("M", bound=BaseModel)
SUMMARY_MONTHS_DAYS = 90  # cross-validation sees three months of session summaries
OBSERVATIONS_PER_CALL = 40  # classification reads observations in batches of this size
WORDS = 3  # quotes of the user's own words per fact or observation in a prompt
QUOTE_CHARS = 240  # each quote cut to this many characters
MAX_VERIFY = 80  # seed step 5: at most 80 suspected facts go to the LLM


@dataclass(frozen=True)
class SleepLimits:
    """Sleep's section of the settings, built in `app.py` (`sleep_limits`): field `<name>` is
    the setting `llm_<name>`."""

    run_budget: int  # tokens one run may spend in all (0: no limit)
    run_max_calls: int  # LLM calls one run may make (0: no limit)
    max_input_tokens: int  # the input of one call


@dataclass
class SessionWork:
    """One session with turns after its `processed_sessions.through_turn_id`."""

    session_id: int
    key: str
    turns: list[Turn]
    skipped: str | None = None
    summary: str = ""
    tags: list[str] = field(default_factory=list)
    extracted: bool = False

    @property
    def processed(self) -> bool:
        """Digested or skipped: either way its turns count as processed (step 14)."""
        return self.extracted or self.skipped is not None

    @property
    def through(self) -> int:
        return self.turns[-1].id

    @property
    def turn_ids(self) -> set[int]:
        return {t.id for t in self.turns}


@dataclass
class Heard:
    """An observation made in this run: its changeset ref and what it says."""

    ref: Ref
    draft: ObservationDraft

    @property
    def said_at(self) -> str:
        """Valid time: its first turn's own timestamp (extraction always sets it)."""
        return self.draft.said_at or ""


@dataclass
class Ctx:
    profile: Profile
    memory: Memory
    llm: LLM | None
    meter: TokenMeter
    limits: SleepLimits
    step: str | None = None  # the LLM step now running, and its answer's schema (for `room`)
    schema: type[BaseModel] | None = None
    cuts: list[str] = field(default_factory=list)  # what answers had over their caps, this step
    work: Working = field(default_factory=lambda: Working(0))
    trajectory: Trajectory | None = None
    view_events: list[Event] = field(default_factory=list)
    anchors: set[int] = field(default_factory=set)
    sessions: list[SessionWork] = field(default_factory=list)
    heard: list[Heard] = field(default_factory=list)
    digests: list[SessionDigest] = field(default_factory=list)
    confirmed: list[int] = field(default_factory=list)
    disputes_settled: int = 0
    contradicted: list[int] = field(default_factory=list)  # new facts that supersede an old one
    prompts: dict[str, int] = field(default_factory=dict)
    said: dict[int, list[str]] = field(default_factory=dict)  # fact → observation texts behind it
    reports: list[StepReport] = field(default_factory=list)
    turns: dict[int, Turn] = field(default_factory=dict)  # this run's turns, by id

    @property
    def now(self) -> dt.datetime:
        return self.work.now

    @property
    def digested(self) -> list[SessionWork]:
        return [s for s in self.sessions if s.extracted and s.skipped is None]

    def ask(self, step: str, user: str, schema: type[M], max_tokens: int | None = None) -> M:
        """One structured call of `step` with its packaged prompt as the system message."""
        assert self.llm is not None
        p = prompt(step)
        self.prompts[step] = p.version
        result = self.llm.complete(
            [{"role": "system", "content": p.text}, {"role": "user", "content": user}],
            schema=schema,
            step=step,
            max_tokens=max_tokens,
            meter=self.meter,
        )
        self.cuts += result.cuts
        data: M = result.data
        return data

    def intake_open(self) -> bool:
        """May the run take in another session? Only while under half its call cap and budget,
        counting the calls classification will need for the observations heard so far."""
        return self.meter.intake_open(calls_ahead=len(self.heard) // OBSERVATIONS_PER_CALL + 8)

    def words(self, fact: Fact, limit: int = WORDS) -> list[str]:
        """The words behind a fact, with the day each was said (valid time): the turns that
        support it, latest first — this run's, then the stored evidence; each quote bounded.
        Without any turn text, this run's observations of it (marked as a paraphrase)."""
        found: dict[int, tuple[str, str, str]] = {}
        for tid in reversed(self.work.heard_in.get(fact.id, [])):
            if (t := self.turns.get(tid)) is not None:
                found.setdefault(tid, (t.ts, t.speaker or t.role, t.text))
        if fact.id > 0 and len(found) < limit:
            for ev in reversed(self.profile.fact(fact.id).evidence):
                if ev.polarity == "support" and ev.turn_id and ev.text:
                    found.setdefault(ev.turn_id, (ev.said_at or ev.created_at, "", ev.text))
        quotes = [quote(*found[t]) for t in list(found)[:limit]]
        if quotes:
            return quotes
        return [f"(paraphrase) {s}" for s in self.said.get(fact.id, [])[:limit]]

    def observation_words(self, draft: ObservationDraft, limit: int = WORDS) -> list[str]:
        """The turns an observation of this run was heard in, dated and bounded."""
        turns = [self.turns[t] for t in draft.turn_ids if t in self.turns][:limit]
        return [quote(t.ts, t.speaker or t.role, t.text) for t in turns]

    def room(self, share: float) -> int:
        """Tokens a part of one prompt may take: a share of what the input cap leaves once the
        running step's system prompt, schema and framing are counted."""
        cap = self.limits.max_input_tokens
        if self.llm is not None and self.step is not None:
            cap = min(cap, self.llm.room(prompt(self.step).text, self.schema))
        return int(cap * share)


def quote(said_at: str, who: str, text: str) -> str:
    """`2023-05-08 Caroline: “I went to a support group yesterday…”`: a turn's own words, with
    the day it was said, cut at `QUOTE_CHARS`."""
    flat = " ".join(text.split())
    cut = flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1] + "…"
    return f"{said_at[:10]} {who + ': ' if who else ''}“{cut}”"


def fit(lines: Sequence[str], tokens: int) -> list[str]:
    """As many lines, in order, as fit in `tokens` (estimated)."""
    out, used = [], 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > tokens:
            break
        out.append(line)
        used += cost
    return out


def section(title: str, lines: Sequence[str], empty: str = "(none)") -> str:
    return f"## {title}\n" + ("\n".join(lines) if lines else empty)
