"""Layer 0, solidification: the day's raw context that no memory holds yet → narratives.

The scanner (`tideline.analysis.scanner`, both tracks) is read for the day: Track B's chunks of
unlinked turns between the day's start and end, Track A's narratives of the day without links.
The model decides what is worth keeping (in batches that fit the input cap); each memory is
written through the normal write path with `source_links` to the exact turns it comes from.

Validation, before anything is written: a memory must cite at least one turn, and only turns that
were in its input — an invented id, a turn of another batch or day, is refused with the memory
(counted and named in the note). A turn some narrative already links to is not offered again, and
a memory whose turns were all linked meanwhile is refused, so re-running a day adds nothing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from tideline.analysis import Chunk
from tideline.analysis.scanner import Scan, scan_unindexed
from tideline.clock import to_text
from tideline.consolidate.dream._answers import MemoryOut, Solidified
from tideline.consolidate.dream._layer_context import LayerCtx, Plan, Writer
from tideline.embed import estimate_tokens

PROMPT = "dream_solidify"
MAX_TOKENS = 2500
TURN_CHARS = 500  # each turn as the prompt shows it


def day_scan(ctx: LayerCtx) -> Scan:
    """The scanner's output, cut to the day: turns in [start, end), unlinked memories of the day."""
    scan = scan_unindexed(ctx.memory, after=ctx.day.before)
    chunks: list[Chunk] = []
    for c in scan.chunks:
        turns = tuple(t for t in c.turns if to_text(t.timestamp) < ctx.day.end)
        if turns:
            chunks.append(replace(c, index=len(chunks), turns=turns))
    unlinked = [n for n in scan.unlinked if ctx.day.start <= n["created_at"] < ctx.day.end]
    return replace(scan, cutoff=ctx.day.start, chunks=chunks, unlinked=unlinked)


def batches(scan: Scan, room: int) -> list[Scan]:
    """Consecutive chunks grouped so each batch's markdown fits `room` tokens (a chunk larger
    than that goes alone; the model reads it cut at `TURN_CHARS` a turn)."""
    out: list[Scan] = []
    current: list[Chunk] = []
    used = 0
    for c in scan.chunks:
        cost = sum(estimate_tokens(t.text[:TURN_CHARS]) + 12 for t in c.turns)
        if current and used + cost > room:
            out.append(replace(scan, chunks=current, unlinked=[] if out else scan.unlinked))
            current, used = [], 0
        current.append(c)
        used += cost
    if current or scan.unlinked:
        out.append(replace(scan, chunks=current, unlinked=[] if out else scan.unlinked))
    return out


def inputs(ctx: LayerCtx, scan: Scan) -> dict[str, str]:
    return {"day": ctx.day.label, "unindexed": scan.to_markdown(max_chars=TURN_CHARS)}


def compute(ctx: LayerCtx) -> Plan:
    with ctx.memory.lock:
        scan = day_scan(ctx)
    if not scan.chunks and not scan.unlinked:
        return Plan({"turns": 0}, "nothing unindexed on this day")
    keep: list[MemoryOut] = []
    links: list[tuple[int, list[int]]] = []
    problems: list[str] = []
    offered_all: set[int] = set()
    for batch in batches(scan, ctx.room(0.6)):
        offered = {cast(int, t.id) for c in batch.chunks for t in c.turns}
        offered_all |= offered
        unlinked = {int(n["id"]) for n in batch.unlinked}
        answer = ctx.ask(PROMPT, inputs(ctx, batch), Solidified, MAX_TOKENS)
        for m in answer.memories:
            bad = sorted(set(m.source_links) - offered)
            if not m.source_links:
                problems.append(f"memory {m.gesture[:40]!r}: no source turns")
            elif bad:
                problems.append(f"memory {m.gesture[:40]!r}: turns {bad} were not in its input")
            else:
                keep.append(m)
        for link in answer.links:
            bad = sorted(set(link.turns) - offered)
            if link.narrative not in unlinked or bad or not link.turns:
                problems.append(
                    f"link of narrative {link.narrative}: not an unlinked memory of the day or turns {bad} not in its input"
                )
            else:
                links.append((link.narrative, sorted(set(link.turns))))
    seen: set[tuple[int, ...]] = set()
    unique = []
    for m in keep:
        key = tuple(sorted(set(m.source_links)))
        if key in seen:
            problems.append(f"memory {m.gesture[:40]!r}: same turns as another memory")
            continue
        seen.add(key)
        unique.append(m)

    def apply(w: Writer) -> dict[str, int]:
        linked = ctx.memory.narratives.linked_turn_ids(sorted(offered_all))
        late = 0
        for m in unique:
            if set(m.source_links) <= linked:
                late += 1  # another writer solidified these turns meanwhile
                continue
            fields = m.model_dump()
            fields["created_at"] = max(_stamp_of(ctx, m.source_links), ctx.day.start)
            w.narrative("narrative", **fields)
        if links:
            ctx.memory.narratives.add_links([(n, t) for n, ts in links for t in ts])
            for n, _ in links:
                w.add("linked", n)
        return {"already_linked": late} if late else {}

    note = "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")
    changes = {
        "turns": scan.turns,
        "chunks": len(scan.chunks),
        "memories": len(unique),
        "links": len(links),
        "refused": len(problems),
    }
    return Plan(
        changes, f"refused: {note}" if problems else "", apply=apply if unique or links else None
    )


def _stamp_of(ctx: LayerCtx, turn_ids: list[int]) -> str:
    """A solidified memory happened when its last source turn did."""
    return max(t.ts for t in ctx.memory.raw.get(sorted(turn_ids)))
