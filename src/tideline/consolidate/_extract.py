"""Phase one, extraction (seed steps 1 and 2).

Step 1 reads the profile once (`Profile.read`, no write lock) and finds every session with turns
after its `processed_sessions.through_turn_id`.

Step 2 asks the LLM, per session, for observations (type, topic; third-party ones apart by
`about`), tags, a summary, people (merged into `relationships` by name) and events (importance,
decay_days). A session is skipped as tool-only, and still counted as processed, when
- by rule: it has no `user` turn at all (only the agent, tools or system messages spoke), or
- by the model: it answers `tool_only` (the user only asked for a task and said nothing personal).
Without an LLM only the rule applies; the other sessions stay unprocessed for a later run.
A session too long for one prompt is read in consecutive chunks.
"""

from __future__ import annotations

import datetime as dt

from tideline.clock import Window, from_text, to_text, when
from tideline.consolidate._prompts import fact_line, trajectory_text, turn_line
from tideline.consolidate._schemas import EventOut, Extraction
from tideline.consolidate._sleep_context import (
    SUMMARY_MONTHS_DAYS,
    Ctx,
    Heard,
    SessionWork,
    fit,
    section,
)
from tideline.consolidate._working import Working
from tideline.embed import estimate_tokens
from tideline.llm import NO_LLM_NOTE
from tideline.memory import Turn
from tideline.profile import EventDraft, ObservationDraft, PersonMention, first_said, person_line
from tideline.runs import Outcome

NO_USER_TURNS = "tool-only: no user turns"
MODEL_TOOL_ONLY = "tool-only: the model found nothing personal"
USER_WORDS = {"user", "the user", "me", "i", "myself"}
MAX_SUMMARY = 8000  # a session's digest (the profile's limit), however many chunks it took


def load(ctx: Ctx) -> Outcome:
    """Step 1: the profile (live facts, and the ones that expired after the earliest of this
    run's words: believed when those were said) + latest trajectory, and the unprocessed
    sessions."""
    view = ctx.profile.read()
    ctx.work = Working.of(view, ctx.profile.edges())
    ctx.work.strategy_days = ctx.profile.rules.strategy_days
    ctx.view_events = view.events
    ctx.anchors = view.anchors
    ctx.trajectory = view.trajectory
    for sid, head in sorted(ctx.memory.session_heads().items()):
        done = view.processed.get(sid, 0)
        if head > done:
            turns = ctx.memory.session_turns(sid, done)
            if turns:
                ctx.sessions.append(SessionWork(sid, turns[0].session, turns))
    ctx.sessions.sort(key=lambda s: (s.turns[0].ts, s.session_id))  # in the user's time
    ctx.turns = {t.id: t for s in ctx.sessions for t in s.turns}
    ctx.work.read(ctx.turns.values())
    if ctx.work.times:  # what a rule ended after this run's first words, judged again
        first = min(ctx.work.times.values())
        ctx.work.revive(ctx.profile.expired_after(first))
        if ctx.work.dormant:
            ctx.work.revive_edges(ctx.profile.edges(live=False))
        settled = ctx.profile.settled_after(first)
        ctx.work.reconsider(settled)
        for fid in {s.fact_id for s in settled if s.fact_id is not None}:
            if fid not in ctx.work.facts and fid not in ctx.work.questioned:
                ctx.work.questioned[fid] = ctx.profile.fact(fid, evidence=False)
    # the summaries of the three months before the conversation's present (valid time)
    since = from_text(ctx.work.present) - dt.timedelta(days=SUMMARY_MONTHS_DAYS)
    ctx.digests = ctx.profile.digests(to_text(since))
    return Outcome({"facts": len(view.facts), "sessions": len(ctx.sessions)})


def extract(ctx: Ctx) -> Outcome:
    """Step 2: observations, tags, people and events of each unprocessed session."""
    counts = {"sessions": 0, "skipped": 0, "observations": 0, "people": 0, "events": 0}
    for s in ctx.sessions:
        if not any(t.role == "user" for t in s.turns):
            s.skipped = NO_USER_TURNS
            counts["skipped"] += 1
    waiting = [s for s in ctx.sessions if s.skipped is None]
    if ctx.llm is None:
        note = (
            f"{NO_LLM_NOTE}; {len(waiting)} session(s) stay unprocessed" if waiting else NO_LLM_NOTE
        )
        return Outcome(counts, note, status="skipped" if waiting else "done")
    invented: dict[str, list[int]] = {}
    cut = ""
    for n, s in enumerate(waiting):
        if not ctx.intake_open():
            wait = len(waiting) - n
            cut = f"cut at {n} session(s) by the run's call cap or budget; {wait} wait for the next run"
            break
        _extract_session(ctx, s, counts, invented)
        s.extracted = True
        counts["sessions"] += 1
        counts["skipped"] += s.skipped is not None
    ctx.heard.sort(key=lambda h: h.said_at)  # stable: a session's own order within a time
    counts["invented_turns"] = sum(len(v) for v in invented.values())
    return Outcome(counts, "; ".join(n for n in (cut, invented_note(invented)) if n))


def invented_note(invented: dict[str, list[int]], shown: int = 10) -> str:
    """Which turn ids the model cited that its session does not hold (they were dropped)."""
    parts = []
    for key, found in invented.items():
        ids = sorted(set(found))
        more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
        parts.append(f"{key}: {', '.join(map(str, ids[:shown]))}{more}")
    return "dropped turn ids the model invented (" + "; ".join(parts) + ")" if parts else ""


def _context_block(ctx: Ctx) -> str:
    facts = fit([fact_line(f) for f in ctx.work.live()], ctx.room(0.15))
    people = fit([person_line(r) for r in ctx.work.people.values()], ctx.room(0.05))
    return "\n\n".join(
        [
            section("The profile so far (context only; do not repeat it)", facts),
            section("People already known", people),
            section("Trajectory", trajectory_text(ctx.work)),
        ]
    )


def chunks(turns: list[Turn], tokens: int) -> list[list[Turn]]:
    """Consecutive runs of turns whose lines fit in `tokens` each (a turn never splits)."""
    out: list[list[Turn]] = [[]]
    used = 0
    for t in turns:
        cost = estimate_tokens(turn_line(t)) + 1
        if out[-1] and used + cost > tokens:
            out.append([])
            used = 0
        out[-1].append(t)
        used += cost
    return out


def _extract_session(
    ctx: Ctx, s: SessionWork, counts: dict[str, int], invented: dict[str, list[int]]
) -> None:
    head = _context_block(ctx)
    users = {t.speaker.casefold() for t in s.turns if t.role == "user" and t.speaker}
    by_id = {t.id: t for t in s.turns}
    answers: list[Extraction] = []
    parts = chunks(s.turns, ctx.room(0.5))
    for part in parts:
        lines = [turn_line(t) for t in part]
        user = f"{head}\n\n" + section(f"Session {s.key}", lines)
        answers.append(ctx.ask("extract", user, Extraction))
    if all(a.tool_only for a in answers):
        s.skipped = MODEL_TOOL_ONLY
        return
    s.summary = " ".join(a.summary.strip() for a in answers if a.summary.strip())[:MAX_SUMMARY]
    s.tags = list(dict.fromkeys(t.strip()[:64] for a in answers for t in a.tags if t.strip()))[:8]
    named: list[int] = []  # every turn id the answers cite, observations' then events'
    for a in answers:
        named += [i for o in a.observations for i in o.turns]
        named += [i for e in a.events for i in e.turns]
    stray = [i for i in named if i not in by_id]
    if stray:
        invented[s.key] = stray
    for a, part in zip(answers, parts, strict=True):
        for o in a.observations:
            turn_ids = tuple(dict.fromkeys(i for i in o.turns if i in by_id))
            about = "user" if o.about.strip().casefold() in USER_WORDS | users else o.about
            said = first_said(turn_ids, ctx.work.times) or part[-1].ts  # said by then
            draft = ObservationDraft(
                o.text, s.session_id, o.type, o.topic, about.strip() or "user", turn_ids, said
            )
            ctx.heard.append(Heard(ctx.work.add_observation(draft), draft))
            counts["observations"] += 1
        for p in a.relationships:
            said = mentioned_at(p.name, part)
            ctx.work.mention(PersonMention(p.name, p.relation, p.details, p.status, said))
            counts["people"] += 1
        for e in a.events:
            cited = [by_id[i] for i in e.turns if i in by_id]
            said = cited[0].ts if cited else part[0].ts
            ctx.work.add_event(event_draft(e, said))
            counts["events"] += 1


def event_draft(e: EventOut, said: str) -> EventDraft:
    """The event in the user's time: the date range its time expression names, read against the
    turn that mentioned it ("last weekend" said on Tuesday 27 June 2023 is 24–25 June); without
    one, or one not understood, the day it was mentioned."""
    at = from_text(said)
    window = (when(e.when, at) if e.when.strip() else None) or Window.day_of(at)
    return EventDraft(
        e.title,
        e.details,
        e.importance,
        e.decay_days,
        valid_from=window.since,
        valid_to=window.until,
        said_at=said,
        phrase=e.when.strip()[:200],
    )


def mentioned_at(name: str, part: list[Turn]) -> str:
    """When a person was first named in this part of the session (else when the part began)."""
    key = name.casefold().strip()
    return next((t.ts for t in part if key and key in t.text.casefold()), part[0].ts)
