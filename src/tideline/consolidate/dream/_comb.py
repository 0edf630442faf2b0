"""Layer 1, combing: structured and rational, over the day's memories.

Reads the day's memories (and yesterday's dream and reflections — the one the dream left
among them: dreams feed the next day's combing), the heaviest older memories as background, the
self-concept, the open threads, the profile's live facts — each as it stood on the day combed,
nothing written after it — and the attention heatmap of the week
(which topic clusters retrieval lit up, which it never reached), and asks the model for five
things, each validated against what it was shown (an id it was not shown is refused):

- weight re-evaluation: a score moves at most one step a night, within 1–5, and a dream's
  importance stays 1; then recurrence is refreshed from today's tags and every weight recomputed
  with the anti-inflation rule (`tideline.analysis.scripts.refresh_weights`, the script layer's
  own rules);
- self-concept updates: narratives of kind `reflection`, each with the memories it rests on
  (`dream_basis`) and their source turns as links; a sentence the self-concept already holds is
  not written again, its new grounds are added to the one held (`_concept`); one resting on a
  dream, or on the reflection a dream left, is refused (imagined grounds);
- conflicts between two memories: a thread of kind `conflict`; with a profile fact: a `probe`
  strategy on that fact, through the profile's changeset (carrying this dream run's id) — never a
  fact written directly; a dream or the reflection it left (imagined) grounds neither, so it
  never becomes a question about a fact;
- threads opened (with the memories that raised them), touched and closed.
"""

from __future__ import annotations

import datetime as dt

from tideline.analysis.attention import heatmap
from tideline.analysis.scripts import refresh_weights
from tideline.clock import to_text
from tideline.consolidate._prompts import fact_line
from tideline.consolidate._sleep_context import fit
from tideline.consolidate.dream._answers import Digest
from tideline.consolidate.dream._concept import COMPARED, dreamt, held, repeated
from tideline.consolidate.dream._layer_context import LayerCtx, Plan, Writer, memory_line
from tideline.memory import Narrative
from tideline.profile import Fact

PROMPT = "dream_digest"
MAX_TOKENS = 2000
SELF_CONCEPT = 10
THREADS = 30
OPEN_SCANNED = 1000  # open threads read to find the ones already open on the day combed
FACTS = 40
ATTENTION_DAYS = 7  # the heatmap's window: the week up to the day combed
HOT, DESERTS = 8, 10  # lit clusters and deserts shown


def memories(ctx: LayerCtx) -> list[Narrative]:
    """The day's memories, yesterday's dreams and reflections, then the heaviest others."""
    day = ctx.day
    yesterday = f"{(day.date - dt.timedelta(days=1)).isoformat()}T00:00:00Z"
    today = ctx.memory.narratives.between(day.start, day.end)
    dreams = ctx.memory.narratives.between(yesterday, day.start, ["dream", "reflection"])
    shown = {n.id for n in today + dreams}
    room = max(0, ctx.limits.comb_memories - len(shown))
    heavy = [  # the older memories of then: none written after the day combed
        n
        for n in ctx.memory.narratives.pool(0.0, room + len(shown), ["narrative"], day.end)
        if n.id not in shown
    ]
    return (today + dreams + heavy[:room])[: max(ctx.limits.comb_memories, len(today))]


def inputs(ctx: LayerCtx) -> tuple[dict[str, str], list[Narrative], set[int], set[int]]:
    """The prompt's inputs and what they show: memories, thread ids, fact ids."""
    mems = memories(ctx)
    lines = fit([memory_line(n) for n in mems], ctx.room(0.5))
    mems = mems[: len(lines)]
    # the self-concept, threads and facts as they stood on the day combed (a past day's dream
    # never reads what came later)
    concept = [n for n, _ in held(ctx.memory, ctx.stores.basis, SELF_CONCEPT, ctx.day.end)]
    opened = ctx.stores.threads.select("open", OPEN_SCANNED)
    threads = [t for t in opened if t.opened_at < ctx.day.end][:THREADS]
    facts = _facts_then(ctx)
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
        "attention": attention(ctx),
    }
    return values, mems, {t.id for t in threads}, {f.id for f in facts}


def _facts_then(ctx: LayerCtx) -> list[Fact]:
    """The live facts, heaviest first — or, for a past day, the facts believed then."""
    if ctx.day.end <= to_text(ctx.day.clock()):
        return ctx.profile.as_of(ctx.day.label).facts[:FACTS]
    return [a.fact for a in ctx.profile.active()[:FACTS]]


def attention(ctx: LayerCtx) -> str:
    """The week's attention heatmap in a few lines: the clusters retrieval lit up most, then
    the deserts it never reached (the seed's input to combing)."""
    since = (ctx.day.date - dt.timedelta(days=ATTENTION_DAYS - 1)).isoformat()
    heat = heatmap(ctx.memory, since, ctx.day.label)
    lines = [f"{heat.total_hits} retrieval hit(s) from {since} to {ctx.day.label}"]
    lines += [
        f"- {c.label} ({c.size} memories): {c.hits} hit(s), {c.share:.0%} of them"
        for c in heat.clusters[:HOT]
    ]
    if heat.unclustered_hits:
        lines.append(f"- {heat.unclustered_hits} hit(s) on memories in no cluster")
    if heat.deserts:
        shown = ", ".join(c.label for c in heat.deserts[:DESERTS])
        more = f" and {len(heat.deserts) - DESERTS} more" if len(heat.deserts) > DESERTS else ""
        lines.append(f"never reached (attention deserts): {shown}{more}")
    if not heat.clusters and not heat.deserts:
        lines.append(f"(no clusters: {heat.note})" if heat.note else "(no clusters)")
    return "\n".join(lines)


def compute(ctx: LayerCtx) -> Plan:
    with ctx.memory.lock:
        values, mems, thread_ids, fact_ids = inputs(ctx)
        open_pairs = {
            tuple(t.memories)
            for t in ctx.stores.threads.select("open", 1000)
            if t.kind == "conflict"
        }
        imagined = dreamt(ctx.memory, ctx.stores.basis, mems)
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
        """A dream, or the reflection it left, is imagined: it never contradicts a memory or a
        fact."""
        dreams = [i for i in ids if i in imagined]
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
    concept = [
        s
        for s in answer.self_concept
        if shown(s.rests_on, "self_concept") and lived(s.rests_on, "self_concept")
    ][:3]
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
        known = [n for n, _ in held(ctx.memory, ctx.stores.basis, COMPARED)]
        said_again = 0
        for s in concept:
            again = repeated(s.text, known)
            if again is not None:  # the same sentence: it gains grounds, not a twin
                ctx.stores.basis.add(again.id, s.rests_on)
                said_again += 1
                continue
            nid = w.narrative(
                "reflection",
                rests_on=s.rests_on,
                gesture=s.text,
                context=s.context,
                importance=s.importance,
                emotional=s.emotional,
                unresolved=s.unresolved,
            )
            known = [*ctx.memory.narratives.get([nid], links=False), *known]
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
            ctx.profile.apply(cs, dream_run_id=ctx.run_id)
        weights = refresh_weights(ctx.memory)
        return {
            "self_concept": len(concept) - said_again,
            "self_concept_repeated": said_again,
            "weights_changed": weights.weights_changed,
            "deflated": weights.deflated,
        }

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
