"""Phase three, maintenance (seed steps 7, 8, 9 and 12).

7 edges: the LLM links the facts this run created, supported or moved to other live facts with
  typed edges (causes, related_to, supports, contradicts, temporal, hierarchy); ids it invents,
  self-loops and edges to facts no longer live are ignored.
8 maturity, 9 expiry and 12 dedupe are the profile's pure rules (`plan_maturity`,
  `plan_established`, `plan_expiry`, `plan_dedupe`), run on the working projection so they see
  this run's earlier decisions, all judged in valid time: maturity and establishment come before
  expiry, so a fact that earned a longer life or the established status before it expired has
  it, however late the run. Step 9 also ends strategies (`plan_strategies`), this run's own
  included: answered by what this run heard in time, or lapsed; the ones whose fact this run
  retired ended obsolete when it did.
"""

from __future__ import annotations

from tideline.consolidate._prompts import fact_line
from tideline.consolidate._schemas import Edges
from tideline.consolidate._sleep_context import Ctx, fit, section
from tideline.llm import NO_LLM_NOTE
from tideline.profile import (
    plan_dedupe,
    plan_established,
    plan_expiry,
    plan_maturity,
    plan_strategies,
)
from tideline.runs import Outcome


def edges(ctx: Ctx) -> Outcome:
    """Step 7: typed edges for the facts this run affected."""
    live = ctx.work.live()
    affected = [f for f in live if f.id in ctx.work.touched]
    if not affected:
        return Outcome({"affected": 0, "edges": 0})
    if ctx.llm is None:
        return Outcome({"affected": len(affected)}, NO_LLM_NOTE, status="skipped")
    others = [f for f in live if f.id not in ctx.work.touched]
    user = "\n\n".join(
        [
            section(
                "Facts changed in this run", fit([fact_line(f) for f in affected], ctx.room(0.3))
            ),
            section("Other live facts", fit([fact_line(f) for f in others], ctx.room(0.3))),
        ]
    )
    answer = ctx.ask("edges", user, Edges)
    added = 0
    for e in answer.edges:
        a, b = ctx.work.fact(e.from_fact), ctx.work.fact(e.to_fact)
        if a is None or b is None or a.id == b.id or not (a.active and b.active):
            continue
        if (e.kind, a.id, b.id) not in ctx.work.edges:
            ctx.work.add_edge(e.kind, a.id, b.id)
            added += 1
    return Outcome({"affected": len(affected), "edges": added})


def expiry(ctx: Ctx) -> Outcome:
    """Step 9: the strategies answered by this run's conversations, or lapsed (this run's own
    too, in valid time); expired facts closed (each with a verify strategy, itself answered or
    lapsed in turn); expired events closed (this run's too). Facts revived for this run's older
    words and left untouched are closed again unchanged."""
    w = ctx.work
    w.rest()
    days = ctx.profile.rules.strategy_days

    def settle() -> dict[str, list[int]]:
        waiting = [s for s in w.strategies.values() if s.status != "resolved"]
        return plan_strategies(waiting, w.asked_about(), w.heard, ctx.now, w, days=days)

    before = settle()  # answered before its fact expired, or lapsed first
    closed = plan_expiry(w.live(), ctx.view_events, ctx.now, w, w.events)
    after = settle()  # the verify questions the expiries raised
    return Outcome(
        {
            "closed": len(closed),
            "verify": len(closed),
            "answered": len(before["answered"] + after["answered"]),
            "obsolete": len(w.obsoleted),
            "expired": len(before["expired"] + after["expired"]),
        }
    )


def maturity(ctx: Ctx) -> Outcome:
    """Step 8: longer decay for old, well-evidenced facts (anchors: thresholds −40 %), and the
    long-standing, well-evidenced confirmed facts become established — each when it was earned
    (valid time), before expiry judges them."""
    longer = plan_maturity(ctx.work.live(), ctx.now, ctx.work, ctx.anchors)
    established = plan_established(ctx.work.live(), ctx.work, ctx.profile.rules)
    return Outcome({"longer_decay": len(longer), "established": len(established)})


def dedupe(ctx: Ctx) -> Outcome:
    """Step 12: duplicates merged into the fact kept (closed with merged_into, never deleted)."""
    merged = plan_dedupe(ctx.work.live(), ctx.work)
    return Outcome({"merged": len(merged)})
