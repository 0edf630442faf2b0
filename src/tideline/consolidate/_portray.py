"""Phase four, output (seed steps 10, 11, 13 and 14).

10 user model: communication-style dimensions read from the user's own turns of this run.
11 trajectory: regenerated only on a major change (a fact confirmed, a dispute settled, or a
   contradiction in an important category) and when at least 2 sessions were digested since the
   last trajectory (this run's included).
13 snapshot: profile facts (by injection weight) + user model + active events + relationships +
   edges + trajectory, as text for injection T0 and as JSON; skipped when the run changed nothing
   and a snapshot exists.
14 mark processed: each session digested or skipped is processed up to its last turn read, with
   its digest (summary, tags, or why it was skipped). Last, and in the same transaction as all the
   rest: a run that dies before applying leaves every session unprocessed.
"""

from __future__ import annotations

from tideline.clock import to_text
from tideline.consolidate._prompts import fact_line, trajectory_text, turn_line
from tideline.consolidate._schemas import TrajectoryOut, UserModelOut
from tideline.consolidate._sleep_context import Ctx, fit, section
from tideline.llm import NO_LLM_NOTE
from tideline.profile import Event, EventDraft, event_expiry, event_line, is_expired
from tideline.runs import Outcome

TRAJECTORY_SESSIONS = 2  # seed step 11: at least 2 sessions since the last trajectory
IMPORTANT = {
    "work", "job", "occupation", "career", "city", "location", "home", "residence", "country",
    "relationship", "family", "partner", "health", "education", "school", "language", "identity",
}  # fmt: skip


def user_model(ctx: Ctx) -> Outcome:
    """Step 10: communication style from the user's own words."""
    turns = [t for s in ctx.digested for t in s.turns if t.role == "user"]
    if not turns:
        return Outcome(note="no user turns digested in this run")
    if ctx.llm is None:
        return Outcome(note=NO_LLM_NOTE, status="skipped")
    current = [f"{k}: {v}" for k, v in sorted(ctx.work.user_model.items())]
    said = fit([turn_line(t) for t in reversed(turns)], ctx.room(0.5))
    user = section("Current reading", current) + "\n\n" + section("The user's messages", said)
    answer = ctx.ask("user_model", user, UserModelOut)
    ids = {t.id for t in turns}
    changed = 0
    for d in answer.dimensions:
        dim, value = d.dimension.strip().lower(), d.value.strip()
        if ctx.work.user_model.get(dim) != value:
            ctx.work.set_user_model(dim, value, tuple(i for i in d.evidence if i in ids))
            changed += 1
    return Outcome({"dimensions": changed})


def major_change(ctx: Ctx) -> str | None:
    if ctx.confirmed:
        return f"{len(ctx.confirmed)} fact(s) confirmed"
    if ctx.disputes_settled:
        return f"{ctx.disputes_settled} dispute(s) settled"
    hit = [i for i in ctx.contradicted if ctx.work.facts[i].category.casefold() in IMPORTANT]
    return f"{len(hit)} contradiction(s) in important categories" if hit else None


def trajectory(ctx: Ctx) -> Outcome:
    """Step 11: the life trajectory, on a major change at least 2 sessions apart."""
    why = major_change(ctx)
    if why is None:
        return Outcome(note="no major change")
    since = (ctx.trajectory.valid_at or ctx.trajectory.made_at) if ctx.trajectory else ""
    sessions = ctx.profile.sessions_digested_since(since) + len(ctx.digested)
    if sessions < TRAJECTORY_SESSIONS:
        return Outcome(note=f"{why}, but {sessions} session(s) since the last trajectory (needs 2)")
    if ctx.llm is None:
        return Outcome(note=NO_LLM_NOTE, status="skipped")
    facts = fit([fact_line(f) for f in ctx.work.live()], ctx.room(0.4))
    summaries = [f"{s.key}: {s.summary}" for s in ctx.digested if s.summary]
    happening = [f"- {event_line(e)}" for e in active_events(ctx)]
    user = "\n\n".join(
        [
            section("Live facts", facts),
            section("Recent changes", [why]),
            section("Active events", fit(happening, ctx.room(0.1))),
            section("Previous trajectory", trajectory_text(ctx.work)),
            section("This run's conversations", fit(summaries, ctx.room(0.2))),
        ]
    )
    t = ctx.ask("trajectory", user, TrajectoryOut)
    anchors = [a for a in dict.fromkeys(t.anchors) if (f := ctx.work.fact(a)) and f.active]
    ctx.work.set_trajectory(
        phase=t.phase, direction=t.direction, stability=t.stability, anchors=anchors,
        unstable_areas=t.unstable_areas, momentum=t.momentum, sessions_since=sessions,
    )  # fmt: skip
    return Outcome({"trajectory": 1, "anchors": len(anchors)}, why)


def active_events(ctx: Ctx) -> list[Event | EventDraft]:
    """The events still relevant now: the profile's active ones and this run's, none expired
    (an event mentioned long after it ended is not active, however new its row)."""
    now = to_text(ctx.now)

    def live(ends: str | None) -> bool:
        return ends is None or ends > now  # the stored form sorts as text

    known = [e for e in ctx.view_events if live(e.expires_at)]
    return [*known, *(d for _, d in ctx.work.events if live(event_expiry(d)))]


# -- step 13 --------------------------------------------------------------------------------
def snapshot(ctx: Ctx) -> Outcome:
    """Step 13: the precompiled memory snapshot for the next conversation, rendered from the
    profile as this run leaves it, inside the run's transaction (real ids, no placeholders)."""
    if not len(ctx.work) and ctx.profile.snapshot() is not None:
        return Outcome(note="nothing changed; the last snapshot stands")
    ctx.work.rebuild_snapshot(ctx.work.present)
    shown = [f for f in ctx.work.live() if not is_expired(f, ctx.now)]
    return Outcome({"facts": len(shown)})


def mark_processed(ctx: Ctx) -> Outcome:
    """Step 14: sessions digested or skipped count as processed through their last turn read."""
    done = [s for s in ctx.sessions if s.processed]
    for s in done:
        said = [t.ts for t in s.turns]
        ctx.work.digest(
            s.session_id, s.through, summary=s.summary, tags=tuple(s.tags), skipped=s.skipped,
            valid_from=min(said), valid_to=max(said),
        )  # fmt: skip
        ctx.work.session_processed(s.session_id, s.through)
    left = len(ctx.sessions) - len(done)
    note = f"{left} session(s) left for a run with an LLM" if left else ""
    return Outcome({"sessions": len(done)}, note)
