"""Layer 3, the symbolic dream: 3–5 symbols from the day's memories → a story → a reflection.

Stored as one narrative of kind `dream`: the symbols in the gesture and as tags, the story as its
context, the reflection it leaves as its cognition direction, resting on the day's memories.
Importance is fixed at 1 (the write path forces it too), so a dream never outweighs lived memory;
emotional charge and openness are scored by the model as usual.

The reflection is also written on its own, as the seed has it: a narrative of kind `reflection`
resting on the dream (so it is marked as from a dream: `_concept.dreamt`), tagged `dream`,
importance 1. Tomorrow's combing reads both among yesterday's memories; the self-concept (T0)
leaves it out until combing, awake, takes it up.
"""

from __future__ import annotations

from tideline.consolidate._sleep_context import fit
from tideline.consolidate.dream._answers import DreamOut
from tideline.consolidate.dream._layer_context import LayerCtx, Plan, Writer, memory_line
from tideline.memory import Narrative

PROMPT = "dream_sleep"
MAX_TOKENS = 1000


def memories(ctx: LayerCtx) -> list[Narrative]:
    """The day's lived memories and reflections (not earlier dreams), as many as fit."""
    found = ctx.memory.narratives.between(ctx.day.start, ctx.day.end, ["narrative", "reflection"])
    return found[: len(fit([memory_line(n) for n in found], ctx.room(0.6)))]


def inputs(ctx: LayerCtx, found: list[Narrative]) -> dict[str, str]:
    return {"day": ctx.day.label, "memories": "\n".join(memory_line(n) for n in found)}


def compute(ctx: LayerCtx) -> Plan:
    with ctx.memory.lock:
        found = memories(ctx)
    if not found:
        return Plan({"memories": 0}, "no memories of the day to dream of")
    answer = ctx.ask(PROMPT, inputs(ctx, found), DreamOut, MAX_TOKENS)
    symbols = [" ".join(s.split())[:60] for s in answer.symbols if s.strip()]

    def apply(w: Writer) -> dict[str, int]:
        dream = w.narrative(
            "dream",
            rests_on=[n.id for n in found],
            gesture=("A dream of " + ", ".join(symbols))[:500],
            context=answer.story[:8000],
            cognition_direction=answer.reflection[:8000],
            importance=1,
            emotional=answer.emotional,
            unresolved=answer.unresolved,
            tags=symbols,
        )
        w.narrative(
            "reflection",
            rests_on=[dream],
            gesture=answer.reflection[:500],
            context=f"The reflection the dream of {ctx.day.label} left (memory #{dream}).",
            importance=1,
            emotional=answer.emotional,
            unresolved=answer.unresolved,
            tags=["dream"],
        )
        return {}

    return Plan(
        {"memories": len(found), "symbols": len(symbols)},
        "symbols: " + ", ".join(symbols),
        apply=apply,
        detail={"symbols": symbols},
    )
