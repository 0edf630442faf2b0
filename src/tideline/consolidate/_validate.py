"""Phase two, checking (seed steps 5 and 6): cross-validation and arbitration.

Step 5: the rule fast path first (suspected, stated, mention_count ≥ 2 → confirmed, no LLM); the
other suspected facts — at most 80, most mentioned first — go to the LLM with their timeline (when
first and last seen, what they replaced), three months of session summaries and the trajectory.

Step 6: every disputed pair (a new fact superseding an old one, both still live) goes to the LLM
with its full context (the words behind both facts, the trajectory, recent summaries):
`accept_new` closes the old fact at the new one's start; `reject_new` rejects the new one. The
loser's edges are retired when the changeset is applied. Pairs without a ruling stay disputed.
"""

from __future__ import annotations

from tideline.consolidate._prompts import fact_line, trajectory_text
from tideline.consolidate._schemas import Arbitration, Ruling, Verification
from tideline.consolidate._sleep_context import MAX_VERIFY, Ctx, fit, section
from tideline.llm import NO_LLM_NOTE
from tideline.profile import (
    DisputedPair,
    Fact,
    confirmable,
    disputed_pairs,
    may_close,
    plan_fast_path,
    settle,
)
from tideline.runs import Outcome


def _summaries(ctx: Ctx, share: float) -> list[str]:
    older = [
        f"{(d.valid_from or d.made_at)[:10]}: {d.summary}"
        for d in reversed(ctx.digests)
        if d.summary
    ]
    fresh = [f"{s.turns[0].ts[:10]} (this run): {s.summary}" for s in ctx.digested if s.summary]
    return fit(fresh + older, ctx.room(share))


def _timeline(ctx: Ctx, f: Fact) -> str:
    parts = [
        f"first said {f.valid_from[:10]}",
        f"last said {f.last_seen_at[:10]}",
        f"said in {f.sessions} session(s)",
    ]
    old = ctx.work.fact(f.supersedes) if f.supersedes is not None else None
    if old is not None:
        parts.append(f"replaces [{old.id}] {old.value} ({old.status})")
    return "; ".join(parts)


def _context(ctx: Ctx) -> str:
    return "\n\n".join(
        [
            section("Trajectory", trajectory_text(ctx.work)),
            section("Conversation summaries (last three months)", _summaries(ctx, 0.2)),
        ]
    )


def cross_validate(ctx: Ctx) -> Outcome:
    """Step 5: fast path by rule, then the LLM for the remaining suspected facts."""
    rules = ctx.profile.rules
    fast = plan_fast_path(ctx.work.live(), ctx.work, rules)
    ctx.confirmed += fast
    suspected = [f for f in ctx.work.live() if f.status == "suspected"]
    rest = [f for f in suspected if confirmable(f, rules)]
    waiting = len(suspected) - len(rest)
    counts = {"fast_path": len(fast), "llm_confirmed": 0, "checked": 0, "waiting": waiting}
    need = rules.confirm_sessions
    note = f"{waiting} backed by fewer than {need} sessions wait for another" if waiting else ""
    rest = sorted(rest, key=lambda f: (-f.mention_count, f.id))[:MAX_VERIFY]
    if not rest:
        return Outcome(counts, note)
    if ctx.llm is None:
        return Outcome(counts, "; ".join(x for x in (note, f"LLM part {NO_LLM_NOTE}") if x))
    lines = []
    for f in rest:
        said = "".join(f"\n    {q}" for q in ctx.words(f))
        lines.append(f"{fact_line(f)}\n    {_timeline(ctx, f)}{said}")
    user = _context(ctx) + "\n\n" + section("Suspected facts", fit(lines, ctx.room(0.4)))
    answer = ctx.ask("verify", user, Verification)
    counts["checked"] = len(rest)
    wanted = {f.id for f in rest}
    for v in answer.verdicts:
        named = ctx.work.fact(v.fact_id)
        if (
            v.verdict == "confirm"
            and named is not None
            and named.id in wanted
            and named.status == "suspected"
        ):
            ctx.work.confirm(named.id, v.why.strip() or "cross-validated")
            ctx.confirmed.append(named.id)
            counts["llm_confirmed"] += 1
    return Outcome(counts, note)


def arbitrate(ctx: Ctx) -> Outcome:
    """Step 6: settle every disputed pair; the loser is closed or rejected."""
    pairs = disputed_pairs(ctx.work.live())
    counts = {"disputes": len(pairs), "accept_new": 0, "reject_new": 0, "deferred": 0}
    if not pairs:
        return Outcome(counts)
    if ctx.llm is None:
        return Outcome(counts, f"{NO_LLM_NOTE}; {len(pairs)} dispute(s) wait", status="skipped")
    blocks = []
    for p in pairs:
        old_said = "".join(f"\n      {q}" for q in ctx.words(p.old)) or "\n      -"
        new_said = "".join(f"\n      {q}" for q in ctx.words(p.new)) or "\n      -"
        blocks.append(
            f"new_fact_id {p.new.id}\n  old: {fact_line(p.old)}\n    {_timeline(ctx, p.old)}\n"
            f"    in the user's words:{old_said}\n  new: {fact_line(p.new)}\n"
            f"    {_timeline(ctx, p.new)}\n    in the user's words:{new_said}"
        )
    user = _context(ctx) + "\n\n" + section("Disputed pairs", fit(blocks, ctx.room(0.5)))
    answer = ctx.ask("arbitrate", user, Arbitration)
    rulings: dict[int, Ruling] = {}
    for given in answer.decisions:
        rulings.setdefault(given.new_fact_id, given)
    held: list[str] = []
    for found in pairs:  # oldest link of a chain first: a run may hold May → June → August
        r = rulings.get(found.new.id)
        old = _standing(ctx, found.old)
        if r is None or old is None or not _live(ctx, found.new):
            continue
        pair = DisputedPair(old, ctx.work.facts[found.new.id])
        accept = r.decision == "accept_new"
        if accept and not may_close(pair, ctx.profile.rules):
            counts["deferred"] += 1
            held.append(f"#{pair.old.id}")
            continue
        settle(ctx.work, pair, accept_new=accept, why=r.why.strip() or "arbitration")
        ctx.disputes_settled += 1
        counts[r.decision] += 1
    note = (
        f"established {', '.join(held)} stay(s), disputed, until a second session backs the new fact"
        if held
        else ""
    )
    return Outcome(counts, note)


def _live(ctx: Ctx, fact: Fact) -> bool:
    now = ctx.work.fact(fact.id)
    return now is not None and now.active


def _standing(ctx: Ctx, fact: Fact) -> Fact | None:
    """The fact a new one now disputes: its old side, or — when an earlier ruling of this run
    rejected that — the nearest live fact it had replaced."""
    seen: set[int] = set()
    now = ctx.work.fact(fact.id)
    while now is not None and not now.active and now.status == "rejected" and now.id not in seen:
        seen.add(now.id)
        now = ctx.work.fact(now.supersedes) if now.supersedes is not None else None
    return now if now is not None and now.active else None
