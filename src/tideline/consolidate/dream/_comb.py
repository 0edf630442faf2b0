"""Layer 1, combing: structured and rational, over the day's memories.

Reads the day's memories (and yesterday's dream and reflections: dreams feed the next day's
combing), the heaviest older memories as background, the self-concept, the open threads and the
profile's live facts, and asks the model for five things, each validated against what it was
shown (an id it was not shown is refused):

- weight re-evaluation: a score moves at most one step a night, within 1–5, and a dream's
  importance stays 1; then recurrence is refreshed from today's tags and every weight recomputed
  with the anti-inflation rule (`tideline.analysis.scripts.refresh_weights`, the script layer's
  own rules);
- self-concept updates: narratives of kind `reflection`, each with the memories it rests on
  (`dream_basis`) and their source turns as links;
- conflicts between two memories: a thread of kind `conflict`; with a profile fact: a `probe`
  strategy on that fact, through the profile's changeset — never a fact written directly; a
  dream (imagined) grounds neither, so it never becomes a question about a fact;
- threads opened (with the memories that raised them), touched and closed.
"""

from __future__ import annotations

import datetime as dt

from tideline.analysis.scripts import refresh_weights
from tideline.consolidate._context import fit
from tideline.consolidate._render import fact_line
from tideline.consolidate.dream._answers import Digest
from tideline.consolidate.dream._context import LayerCtx, Plan, Writer, memory_line
from tideline.memory import Narrative

PROMPT = "dream_digest"
MAX_TOKENS = 2000
SELF_CONCEPT = 10
THREADS = 30
FACTS = 40


def memories(ctx: LayerCtx) -> list[Narrative]:
    """The day's memories, yesterday's dreams and reflections, then the heaviest others."""
    day = ctx.day
    yesterday = f"{(day.date - dt.timedelta(days=1)).isoformat()}T00:00:00Z"
    today = ctx.memory.narratives.between(day.start, day.end)
    dreams = ctx.memory.narratives.between(yesterday, day.start, ["dream", "reflection"])
    shown = {n.id for n in today + dreams}
    room = max(0, ctx.limits.comb_memories - len(shown))
    heavy = [
        n
        for n in ctx.memory.narratives.pool(0.0, room + len(shown), ["narrative"])
        if n.id not in shown
    ]
    return (today + dreams + heavy[:room])[: max(ctx.limits.comb_memories, len(today))]


def inputs(ctx: LayerCtx) -> tuple[dict[str, str], list[Narrative], set[int], set[int]]:
    """The prompt's inputs and what they show: memories, thread ids, fact ids."""
    mems = memories(ctx)
    lines = fit([memory_line(n) for n in mems], ctx.room(0.5))
    mems = mems[: len(lines)]
    concept = ctx.memory.narratives.latest("reflection", SELF_CONCEPT)
    threads = ctx.stores.threads.select("open", THREADS)
    facts = [a.fact for a in ctx.profile.active()[:FACTS]]
    thread_lines = [
        f"[{t.id}] {t.kind}: {t.title} (since {t.opened_at[:10]}, memories {t.memories})"
        for t in threads
    ]
    values = {
        "day": ctx.day.label,
        "memories": "\n".join(lines),
        "self_concept": "\n".join(memory_line(n, 0) for n in concept),
        "threads": "\n".join(fit(thread_lines, ctx.room(0.1))),
        "profile": "\n".join(fit([fact_line(f) for f in facts], ctx.room(0.15))),
    }
    return values, mems, {t.id for t in threads}, {f.id for f in facts}


def compute(ctx: LayerCtx) -> Plan:
    with ctx.memory.lock:
        values, mems, thread_ids, fact_ids = inputs(ctx)
        open_pairs = {
            tuple(t.memories)
            for t in ctx.stores.threads.select("open", 1000)
            if t.kind == "conflict"
        }
    if not mems:
        return Plan({"memories": 0}, "no memories to comb")
    by_id = {n.id: n for n in mems}
    answer = ctx.ask(PROMPT, values, Digest, MAX_TOKENS)
    problems: list[str] = []

    def shown(ids: list[int], what: str) -> bool:
        bad = [i for i in ids if i not in by_id]
        if bad:
            problems.append(f"{what}: memories {bad} were not in the input")
        return not bad

    def lived(ids: list[int], what: str) -> bool:
        """A dream is imagined: it never contradicts a memory or a fact."""
        dreams = [i for i in ids if by_id[i].kind == "dream"]
        if dreams:
            problems.append(f"{what}: memories {dreams} are dreams, not lived memory")
        return not dreams

    dims: dict[int, tuple[int, int, int]] = {}
    for r in answer.reweigh:
        if not shown([r.id], "reweigh"):
            continue
        n = by_id[r.id]
        new = (
            _step(n.importance, r.importance) if n.kind != "dream" else 1,
            _step(n.emotional, r.emotional),
            _step(n.unresolved, r.unresolved),
        )
        if new != (n.importance, n.emotional, n.unresolved):
            dims[n.id] = new
    concept = [s for s in answer.self_concept if shown(s.rests_on, "self_concept")][:3]
    conflicts = [
        c
        for c in answer.conflicts
        if c.a != c.b and shown([c.a, c.b], "conflict") and lived([c.a, c.b], "conflict")
    ]
    probes = []
    for fc in answer.fact_conflicts:
        if fc.fact_id not in fact_ids:
            problems.append(f"fact_conflict: fact {fc.fact_id} was not in the input")
        elif shown([fc.memory], "fact_conflict") and lived([fc.memory], "fact_conflict"):
            probes.append(fc)
    opened = [t for t in answer.threads_open if shown(t.raised_by, "thread")]
    touched = [
        t for t in answer.threads_touch if t.id in thread_ids and shown(t.memories, "thread")
    ]
    closed = [t for t in answer.threads_close if t.id in thread_ids]
    stray = {t.id for t in answer.threads_touch + answer.threads_close} - thread_ids
    if stray:
        problems.append(f"threads {sorted(stray)} are not open threads")

    def apply(w: Writer) -> dict[str, int]:
        now = ctx.day.stamp()
        if dims:
            ctx.memory.narratives.set_dimensions([(*v, k) for k, v in sorted(dims.items())])
            for nid in sorted(dims):
                w.add("reweighed", nid)
        for s in concept:
            w.narrative(
                "reflection",
                rests_on=s.rests_on,
                gesture=s.text,
                context=s.context,
                importance=s.importance,
                emotional=s.emotional,
                unresolved=s.unresolved,
            )
        for c in conflicts:
            pair = tuple(sorted((c.a, c.b)))
            if pair in open_pairs:
                continue
            title = f"conflict: #{pair[0]} vs #{pair[1]}"
            tid = ctx.stores.threads.open(
                title, c.why, pair, kind="conflict", now=now, run_id=ctx.run_id
            )
            w.add("threads", tid)
        for t in opened:
            w.add(
                "threads",
                ctx.stores.threads.open(t.title, t.why, t.raised_by, now=now, run_id=ctx.run_id),
            )
        for moved in touched:
            ctx.stores.threads.touch(moved.id, moved.note, moved.memories, now=now)
            w.add("threads_touched", moved.id)
        for done in closed:
            ctx.stores.threads.close(done.id, done.status, done.why, now=now)
            w.add("threads_closed", done.id)
        if probes:
            cs = ctx.profile.read().changeset()
            for p in probes:
                cs.add_strategy("probe", p.fact_id, f"{p.question} (memory #{p.memory})")
            ctx.profile.apply(cs)
        weights = refresh_weights(ctx.memory)
        return {"weights_changed": weights.weights_changed, "deflated": weights.deflated}

    changes = {
        "memories": len(mems),
        "reweigh": len(dims),
        "self_concept": len(concept),
        "conflicts": len(conflicts),
        "probes": len(probes),
        "threads_opened": len(opened),
        "threads_touched": len(touched),
        "threads_closed": len(closed),
        "refused": len(problems),
    }
    note = "refused: " + "; ".join(problems[:5]) if problems else ""
    return Plan(changes, note, apply=apply)


def _step(current: int, wanted: int | None) -> int:
    """At most one step a night, within 1–5."""
    if wanted is None:
        return current
    return max(1, min(5, current + max(-1, min(1, wanted - current))))
