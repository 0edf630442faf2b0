"""Layer 2, night drift: one heavy memory, a walk to unrelated territory, and a question.

The seed is the heaviest lived memory (kind `narrative`) not used as a seed before. The walk
takes up to `drift_hops` steps; each step goes to a neighbour of the current memory — one that
shares a person or thing (`related_entities`, `entities_role`), a topic cluster, or is among its
nearest in embedding space — choosing the neighbour LEAST like the seed (cosine of the stored
vectors, else the overlap of tags and entities) and only ever further from it: the walk stops
where no neighbour is further away. Where it cannot move at all, it jumps to the memory least
like the seed. The model is asked whether an invisible connection joins the seed and
where the walk ended; only if it finds one is a reflection written (resting on both) — unless
the self-concept holds that sentence already, which then gains the two as grounds. Finding
nothing is a valid outcome: the layer is done, and its record says so. The terrain is what was
lived by the day dreamt of: no memory written after it, no dream and no reflection a dream left
(a waking reflection never rests on an imagined one).
"""

from __future__ import annotations

import numpy as np

from tideline.analysis import ScriptTables
from tideline.consolidate.dream._answers import DriftOut
from tideline.consolidate.dream._concept import COMPARED, dreamt, held, repeated
from tideline.consolidate.dream._layer_context import LayerCtx, Plan, Writer, memory_line
from tideline.memory import Narrative, parse_entities_role

PROMPT = "dream_drift"
MAX_TOKENS = 500
NEAREST = 5


def _entities(n: Narrative) -> set[str]:
    roles, _ = parse_entities_role(n.entities_role)
    return {e.casefold() for e in [*n.related_entities, *roles]}


class Terrain:
    """Every memory with what links them: entities, topics, vectors."""

    def __init__(self, ctx: LayerCtx):
        lived = [n for n in ctx.memory.narratives.all() if n.created_at < ctx.day.end]
        imagined = dreamt(ctx.memory, ctx.stores.basis, lived)
        self.all = {n.id: n for n in lived if n.id not in imagined}
        self.entities = {i: _entities(n) for i, n in self.all.items()}
        self.topics = {
            i: set(t)
            for i, t in ScriptTables(ctx.memory.db, ctx.memory.clock).topics_by_narrative().items()
        }
        ids, matrix = ctx.memory.narratives.index.vectors()
        keep = [k for k, i in enumerate(ids) if int(i) in self.all]
        self.ids = [int(ids[k]) for k in keep]
        self.row = {i: k for k, i in enumerate(self.ids)}
        found = matrix[keep] if keep else np.zeros((0, 0), dtype=np.float32)
        norms = np.linalg.norm(found, axis=1, keepdims=True) if keep else 1.0
        self.matrix = found / np.maximum(norms, 1e-9)

    def likeness(self, a: int, b: int) -> float:
        if a in self.row and b in self.row:
            return float(self.matrix[self.row[a]] @ self.matrix[self.row[b]])
        na, nb = self.all[a], self.all[b]
        sa, sb = set(na.tags) | self.entities[a], set(nb.tags) | self.entities[b]
        return len(sa & sb) / len(sa | sb) if sa | sb else 0.0

    def neighbours(self, i: int) -> dict[int, str]:
        """Memories one step from `i`, with how: a shared entity, a shared topic, nearness."""
        out: dict[int, str] = {}
        for j in self.all:
            if j == i:
                continue
            if self.entities[i] & self.entities[j]:
                out[j] = "entity"
            elif self.topics.get(i, set()) & self.topics.get(j, set()):
                out[j] = "topic"
        if i in self.row:
            sims = self.matrix @ self.matrix[self.row[i]]
            for k in np.argsort(-sims, kind="stable")[: NEAREST + 1]:
                if self.ids[k] != i:
                    out.setdefault(self.ids[k], "embedding")
        return out


def seed(ctx: LayerCtx, terrain: Terrain) -> Narrative | None:
    used = {d.get("seed") for d in ctx.stores.runs.details("drift")}
    lived = [n for n in terrain.all.values() if n.kind == "narrative"]
    fresh = [n for n in lived if n.id not in used] or lived  # every one used: start over
    return max(fresh, key=lambda n: (n.weight, n.created_at, n.id), default=None)


def walk(terrain: Terrain, start: int, hops: int) -> list[tuple[int, str]]:
    """The path from `start`: (memory id, how it was reached)."""
    path = [(start, "seed")]
    visited = {start}
    for _ in range(hops):
        here = path[-1][0]
        near = terrain.neighbours(here)
        away = terrain.likeness(start, here) if here != start else float("inf")
        options = [j for j in near if j not in visited and terrain.likeness(start, j) < away]
        if not options:
            break
        nxt = min(options, key=lambda j: (terrain.likeness(start, j), j))
        path.append((nxt, near[nxt]))
        visited.add(nxt)
    if len(path) == 1 or terrain.likeness(start, path[-1][0]) >= 0.999:
        rest = [j for j in terrain.all if j not in visited]
        if rest:
            far = min(rest, key=lambda j: (terrain.likeness(start, j), j))
            path.append((far, "jump"))
    return path


def inputs(ctx: LayerCtx, terrain: Terrain, path: list[tuple[int, str]]) -> dict[str, str]:
    steps = [f"{how}: {memory_line(terrain.all[i], 120)}" for i, how in path[1:-1]]
    return {
        "start": memory_line(terrain.all[path[0][0]], 1200),
        "path": "\n".join(steps) or "(a direct jump)",
        "destination": memory_line(terrain.all[path[-1][0]], 1200),
    }


def compute(ctx: LayerCtx) -> Plan:
    with ctx.memory.lock:
        terrain = Terrain(ctx)
        start = seed(ctx, terrain)
        path = [] if start is None else walk(terrain, start.id, ctx.limits.drift_hops)
    if start is None:
        return Plan({"memories": len(terrain.all)}, "no lived memory to drift from")
    if len(path) == 1:
        return Plan({"memories": len(terrain.all)}, "nowhere to drift to: one memory only")
    far = path[-1][0]
    detail = {"seed": start.id, "path": [[i, how] for i, how in path], "found": False}
    answer = ctx.ask(PROMPT, inputs(ctx, terrain, path), DriftOut, MAX_TOKENS)
    found = answer.found and bool(answer.connection.strip() or answer.gesture.strip())
    detail["found"] = found
    if not found:
        return Plan(
            {"hops": len(path) - 1, "found": 0},
            "no connection found (nothing written)",
            detail=detail,
        )

    def apply(w: Writer) -> dict[str, int]:
        gesture = answer.gesture.strip() or answer.connection.strip()[:500]
        known = [n for n, _ in held(ctx.memory, ctx.stores.basis, COMPARED)]
        again = repeated(gesture, known)
        if again is not None:  # the same sentence: it gains grounds, not a twin
            ctx.stores.basis.add(again.id, [start.id, far])
            return {"repeated": 1}
        w.narrative(
            "reflection",
            rests_on=[start.id, far],
            gesture=gesture,
            context=answer.connection,
            importance=2,
            emotional=answer.emotional,
            unresolved=answer.unresolved,
            tags=answer.tags[:3],
        )
        return {}

    return Plan(
        {"hops": len(path) - 1, "found": 1},
        f"connection #{start.id} ↔ #{far}",
        apply=apply,
        detail=detail,
    )
