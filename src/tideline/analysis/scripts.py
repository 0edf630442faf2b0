"""The script layer on the agent database: topics, recurrence and weights, the entity graph, and
`run_all`, which runs every step in order.

Each step reads the narratives, runs a pure computation of `tideline.analysis`, compares the result
with what is stored and, only when it differs, replaces the stored rows in ONE transaction. So a run
killed half-way leaves the previous result of the step it was in, and running twice changes nothing
the second time. Every step returns a report of what changed; `run_all` also logs each step in
`runs` (status 'running' → 'ok' / 'failed') through the run runner's record
(`tideline.runs.recorded`), which also measures it.

Order of `run_all`: topics (the keyword taxonomy) → weights (recurrence from today's tags, the
weight formula, then anti-inflation) → soft clusters (labelled with the fresh topics) → entity
graph → the unindexed-context scan (read only).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any, SupportsInt, cast

from tideline.analysis._store import ScriptTables
from tideline.analysis.cluster_routing import rebuild_clusters
from tideline.analysis.entity_graph import EntityGraph, build_entity_graph
from tideline.analysis.keywords import KeywordExtractor
from tideline.analysis.scanner import scan_unindexed
from tideline.analysis.topics import build_topics
from tideline.clock import from_text, now_text
from tideline.memory import (
    DEFAULT_CEILING,
    DEFAULT_WINDOW,
    Memory,
    Narrative,
    WeightedNarrative,
    deflate_recent,
    recompute_weights,
    refresh_recurrence,
)

__all__ = [
    "STEPS",
    "GraphReport",
    "Progress",
    "RunReport",
    "TopicsReport",
    "WeightsReport",
    "last_built",
    "rebuild_entity_graph",
    "rebuild_topics",
    "refresh_weights",
    "run_all",
    "topic_map",
    "topic_text",
]

#: progress(step, done, total): called while a step works through the narratives.
Progress = Callable[[str, int, int], None]
STEPS = ("topics", "weights", "clusters", "graph", "scan")


@dataclass
class _Report:
    """A step's report as JSON (a field-less dataclass, so `asdict` knows `self` is one)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- topics ----------------------------------------------------------------------------------
@dataclass
class TopicsReport(_Report):
    """Topics now, and which appeared or disappeared (by label) since the last build."""

    narratives: int
    topics: int
    changed: bool
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    resized: int = 0


def topic_text(n: Narrative) -> str:
    """What topics are extracted from: gesture, context and cognition direction."""
    return "\n".join(p for p in (n.gesture, n.context, n.cognition_direction) if p.strip())


def _counted(
    rows: list[Narrative], step: str, progress: Progress | None
) -> Iterator[tuple[int, str]]:
    for i, n in enumerate(rows, 1):
        yield n.id, topic_text(n)
        if progress and (i % 250 == 0 or i == len(rows)):
            progress(step, i, len(rows))


def rebuild_topics(
    memory: Memory,
    *,
    max_df: float = 0.2,
    min_df: int = 3,
    merge: bool = False,
    merge_threshold: float = 0.5,
    extractor: KeywordExtractor | None = None,
    progress: Progress | None = None,
    narratives: list[Narrative] | None = None,
) -> TopicsReport:
    """Rebuild `topic_clusters` / `topic_members` from every narrative's gesture + context +
    cognition direction (rules in `tideline.analysis.topics`)."""
    rows = memory.narratives.all() if narratives is None else narratives
    tables = ScriptTables(memory.db, memory.clock)
    topics = build_topics(
        _counted(rows, "topics", progress),
        max_df=max_df,
        min_df=min_df,
        merge=merge,
        merge_threshold=merge_threshold,
        extractor=extractor,
    )
    new_topics = [
        (i, t.keyword, t.label, t.df, json.dumps(list(t.keywords), ensure_ascii=False))
        for i, t in enumerate(topics, 1)
    ]
    new_members = sorted(
        (i, int(cast(SupportsInt, nid))) for i, t in enumerate(topics, 1) for nid in t.member_ids
    )
    old_topics, old_members = tables.topics(), tables.topic_members()
    report = TopicsReport(len(rows), len(topics), changed=False)
    if new_topics == old_topics and new_members == old_members:
        return report
    old_by_key = {r[1]: r for r in old_topics}
    new_by_key = {r[1]: r for r in new_topics}
    report.changed = True
    report.added = [new_by_key[k][2] for k in new_by_key if k not in old_by_key]
    report.removed = [old_by_key[k][2] for k in old_by_key if k not in new_by_key]
    report.resized = sum(
        1 for k in new_by_key if k in old_by_key and new_by_key[k][3] != old_by_key[k][3]
    )
    tables.replace_topics(new_topics, new_members, now_text(memory.clock))
    return report


def topic_map(memory: Memory, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The `limit` largest topics (id, label, size, keywords, built_at) and the number of topics
    in all: the memory map of injection tier T3."""
    with memory.lock:
        return ScriptTables(memory.db, memory.clock).topic_map(limit)


def last_built(memory: Memory, step: str) -> dict[str, Any] | None:
    """When `step` last ran to its end (finished_at, its summary), or None if it never did."""
    with memory.lock:
        return ScriptTables(memory.db, memory.clock).last_run(step)


# -- weights ---------------------------------------------------------------------------------
@dataclass
class WeightsReport(_Report):
    """How many recurrence scores and weights moved, and by how much (absolute weight change)."""

    narratives: int
    recurrence_changed: int
    weights_changed: int
    max_delta: float
    mean_delta: float
    deflated: int
    recent_mean: float | None


def refresh_weights(
    memory: Memory,
    *,
    window: int = DEFAULT_WINDOW,
    ceiling: float = DEFAULT_CEILING,
    narratives: list[Narrative] | None = None,
) -> WeightsReport:
    """Recurrence from today's tag frequencies → weights from the formula → anti-inflation over
    the `window` most recent narratives; written in one transaction. The `narratives` given are
    updated to what was written (the next steps of a run need not read them all again)."""
    rows = memory.narratives.all() if narratives is None else narratives
    recurrence = refresh_recurrence({n.id: n.tags for n in rows})
    weighted = [
        WeightedNarrative(
            n.id,
            from_text(n.created_at),
            n.importance,
            n.emotional,
            n.recurrence,
            n.unresolved,
            n.weight,
        )
        for n in rows
    ]
    weights = recompute_weights(weighted, recurrence)
    deflated = deflate_recent(weighted, window=window, ceiling=ceiling, weights=weights)
    weights.update(deflated)
    changes = [
        (recurrence[n.id], weights[n.id], n.id)
        for n in rows
        if recurrence[n.id] != n.recurrence or weights[n.id] != n.weight
    ]
    deltas = [abs(weights[n.id] - n.weight) for n in rows if weights[n.id] != n.weight]
    recent = sorted(rows, key=lambda n: (n.created_at, n.id), reverse=True)[:window]
    report = WeightsReport(
        narratives=len(rows),
        recurrence_changed=sum(1 for n in rows if recurrence[n.id] != n.recurrence),
        weights_changed=len(deltas),
        max_delta=round(max(deltas), 6) if deltas else 0.0,
        mean_delta=round(sum(deltas) / len(deltas), 6) if deltas else 0.0,
        deflated=len(deflated),
        recent_mean=round(sum(weights[n.id] for n in recent) / len(recent), 4) if recent else None,
    )
    if changes:
        memory.narratives.set_weights(changes)
        for n in rows:
            n.recurrence, n.weight = recurrence[n.id], weights[n.id]
    return report


# -- entity graph ----------------------------------------------------------------------------
@dataclass
class GraphReport(_Report):
    """The graph's size, what changed, and every malformed `entities_role` part with its id."""

    narratives_with_roles: int
    entities: int
    pairs: int
    stable_roles: int
    changed: bool
    malformed: list[dict[str, Any]] = field(default_factory=list)


def rebuild_entity_graph(
    memory: Memory,
    *,
    min_memories: int = 3,
    min_share: float = 0.6,
    narratives: list[Narrative] | None = None,
) -> tuple[EntityGraph, GraphReport]:
    """Rebuild `entity_roles` / `entity_pairs` from every narrative's `entities_role`.

    Malformed parts are reported (with the narrative id) and skipped; the rest still counts.
    """
    rows = memory.narratives.all() if narratives is None else narratives
    tables = ScriptTables(memory.db, memory.clock)
    with_roles = [(n.id, n.entities_role) for n in rows if n.entities_role.strip()]
    graph = build_entity_graph(with_roles, min_memories=min_memories, min_share=min_share)
    stable = {(s.entity, s.role) for s in graph.stable_roles}
    new_roles = sorted(
        (entity, role, count, int((entity, role) in stable))
        for entity, roles in graph.entity_roles.items()
        for role, count in roles.items()
    )
    new_pairs = sorted(
        (
            a,
            b,
            count,
            json.dumps(
                sorted([ra, rb, n] for (ra, rb), n in graph.pair_role_counts[(a, b)].items()),
                ensure_ascii=False,
            ),
        )
        for (a, b), count in graph.pair_counts.items()
    )
    old_roles, old_pairs = tables.entity_rows()
    changed = new_roles != old_roles or new_pairs != old_pairs
    if changed:
        tables.replace_entity_graph(new_roles, new_pairs)
    report = GraphReport(
        narratives_with_roles=len(with_roles),
        entities=len(graph.entity_memories),
        pairs=len(graph.pair_counts),
        stable_roles=len(graph.stable_roles),
        changed=changed,
        malformed=graph.to_dict()["malformed"],
    )
    return graph, report


# -- all -------------------------------------------------------------------------------------
@dataclass
class RunReport(_Report):
    """One report per step that ran, and its time in seconds."""

    narratives: int
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return any(s.get("changed") or s.get("weights_changed") for s in self.steps.values())


def run_all(
    memory: Memory,
    *,
    steps: Iterable[str] = STEPS,
    max_gap: timedelta = timedelta(minutes=30),
    merge_topics: bool = False,
    seed: int = 0,
    progress: Progress | None = None,
) -> RunReport:
    """Run the chosen steps in the fixed order of `STEPS`; each is logged in `runs`."""
    chosen = set(steps)
    unknown = chosen - set(STEPS)
    if unknown:
        raise ValueError(f"unknown step(s) {sorted(unknown)}; the steps are {list(STEPS)}")
    rows = memory.narratives.all()
    tables = ScriptTables(memory.db, memory.clock)
    report = RunReport(len(rows))
    for step in STEPS:
        if step not in chosen:
            continue
        with tables.record_run(step) as run:
            if progress:
                progress(step, 0, len(rows))
            result: Any
            if step == "topics":
                result = rebuild_topics(
                    memory, merge=merge_topics, progress=progress, narratives=rows
                )
            elif step == "weights":
                result = refresh_weights(memory, narratives=rows)  # rows now carry the new weights
            elif step == "clusters":
                result = rebuild_clusters(memory, seed=seed, narratives=rows)
            elif step == "graph":
                result = rebuild_entity_graph(memory, narratives=rows)[1]
            else:
                result = scan_unindexed(memory, max_gap=max_gap).summary()
            data = result if isinstance(result, dict) else result.to_dict()
            run.summary.update(data)
            if progress:
                progress(step, len(rows), len(rows))
        report.steps[step] = data
        report.seconds[step] = run.seconds
    return report
