"""The entity graph: who appears with whom, in which roles, across narratives.

Each narrative's `entities_role` is read by `tideline.memory.parse_entities_role` (the rule writes
are validated against); a part that cannot be read is reported with its narrative id and skipped,
the rest of the field still counts.

Structural function: an entity that keeps the same role across memories can be told apart by what
it does, not only by its name. A role is *stable* for an entity when it appears in at least
`min_memories` (3) of the entity's memories and in at least `min_share` (60%) of them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from tideline.memory import MalformedPart, parse_entities_role

__all__ = [
    "EntityGraph",
    "StableRole",
    "build_entity_graph",
    "to_dot",
]


@dataclass(frozen=True, slots=True)
class StableRole:
    """`entity` had `role` in `count` of its `memories` memories (share = count / memories)."""

    entity: str
    role: str
    count: int
    memories: int
    share: float


@dataclass
class EntityGraph:
    """Counts over all narratives. Pairs are (a, b) with a < b; role pairs follow that order."""

    entity_memories: Counter[str] = field(default_factory=Counter)
    entity_roles: dict[str, Counter[str]] = field(default_factory=dict)
    pair_counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    pair_role_counts: dict[tuple[str, str], Counter[tuple[str, str]]] = field(default_factory=dict)
    role_patterns: Counter[tuple[str, str]] = field(default_factory=Counter)
    stable_roles: list[StableRole] = field(default_factory=list)
    malformed: list[MalformedPart] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able view, sorted so that the same graph always serialises the same way."""
        stable: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for s in self.stable_roles:
            stable[s.entity].append({"role": s.role, "count": s.count, "share": s.share})
        entities = [
            {
                "name": name,
                "memories": self.entity_memories[name],
                "roles": dict(_by_count(self.entity_roles[name])),
                "stable_roles": stable.get(name, []),
            }
            for name in sorted(self.entity_memories, key=lambda e: (-self.entity_memories[e], e))
        ]
        edges = [
            {
                "source": a,
                "target": b,
                "weight": count,
                "role_pairs": [
                    {"source_role": ra, "target_role": rb, "count": n}
                    for (ra, rb), n in _by_count(self.pair_role_counts[(a, b)])
                ],
            }
            for (a, b), count in _by_count(self.pair_counts)
        ]
        return {
            "entities": entities,
            "edges": edges,
            "role_patterns": [
                {"roles": [ra, rb], "count": n} for (ra, rb), n in _by_count(self.role_patterns)
            ],
            "stable_roles": [
                {"entity": s.entity, "role": s.role, "count": s.count, "share": s.share}
                for s in self.stable_roles
            ],
            "malformed": [
                {"narrative_id": _jsonable_id(m.narrative_id), "part": m.part, "reason": m.reason}
                for m in self.malformed
            ],
        }


def _jsonable_id(value: Hashable) -> int | str:
    return value if isinstance(value, (int, str)) else str(value)


def _by_count(counter: Counter[Any]) -> list[tuple[Any, int]]:
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))


def build_entity_graph(
    narratives: Iterable[tuple[Hashable, str | None]],
    *,
    min_memories: int = 3,
    min_share: float = 0.6,
) -> EntityGraph:
    """Co-occurrence graph of `(narrative_id, entities_role)` pairs (see the module docstring)."""
    graph = EntityGraph()
    role_memories: dict[str, Counter[str]] = defaultdict(Counter)
    for nid, text in narratives:
        roles, bad = parse_entities_role(text, nid)
        graph.malformed.extend(bad)
        for entity, entity_roles in roles.items():
            graph.entity_memories[entity] += 1
            role_memories[entity].update(entity_roles)
        for a, b in combinations(sorted(roles), 2):
            graph.pair_counts[(a, b)] += 1
            pair_roles = graph.pair_role_counts.setdefault((a, b), Counter())
            for ra in roles[a]:
                for rb in roles[b]:
                    pair_roles[(ra, rb)] += 1
                    graph.role_patterns[(ra, rb) if ra <= rb else (rb, ra)] += 1
    graph.entity_roles = dict(role_memories)
    for entity in sorted(graph.entity_memories):
        total = graph.entity_memories[entity]
        for role, count in _by_count(role_memories[entity]):
            share = count / total
            if count >= min_memories and share >= min_share:
                graph.stable_roles.append(StableRole(entity, role, count, total, round(share, 4)))
    return graph


def _dot_string(text: str) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, line breaks as \\n."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{escaped}"'


def to_dot(graph: EntityGraph, *, name: str = "entities", min_weight: int = 1) -> str:
    """Graphviz DOT text: one node per entity (its top roles in the label), one undirected edge
    per co-occurring pair with at least `min_weight` shared memories, labelled by its count."""
    lines = [f"graph {_dot_string(name)} {{", "  node [shape=box];"]
    stable = {(s.entity, s.role) for s in graph.stable_roles}
    for entity in sorted(graph.entity_memories):
        top = _by_count(graph.entity_roles.get(entity, Counter()))[:3]
        role_text = ", ".join(
            f"{role}×{n}{'*' if (entity, role) in stable else ''}" for role, n in top
        )
        label = f"{entity} ({graph.entity_memories[entity]})\n{role_text}"
        lines.append(f"  {_dot_string(entity)} [label={_dot_string(label)}];")
    for (a, b), count in sorted(graph.pair_counts.items()):
        if count >= min_weight:
            lines.append(
                f"  {_dot_string(a)} -- {_dot_string(b)} "
                f"[label={_dot_string(str(count))}, weight={count}];"
            )
    lines.append("}")
    return "\n".join(lines) + "\n"
