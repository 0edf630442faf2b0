"""The graphs the panel draws, read from the core: the entity-role graph of the narratives (as
the script layer computes it, without storing it) and the knowledge-graph edges between facts."""

from __future__ import annotations

from typing import Any

from tideline.analysis import build_entity_graph
from tideline.app import Tideline
from tideline.profile import Fact


def graph(app: Tideline) -> dict[str, Any]:
    """`entities` and `edges` (co-occurrence, with role pairs), `fact_edges` with both facts'
    labels, and `malformed` entities_role parts; each read takes its service's lock."""
    rows = [(n.id, n.entities_role) for n in app.memory.all_narratives() if n.entities_role.strip()]
    out = build_entity_graph(rows).to_dict()
    facts = {f.id: f for f in app.profile.facts(status=None)}
    out["fact_edges"] = [
        {
            **e.to_dict(),
            "from_label": _label(facts.get(e.from_fact)),
            "to_label": _label(facts.get(e.to_fact)),
        }
        for e in app.profile.edges(live=True)
    ]
    return out


def _label(fact: Fact | None) -> str:
    return f"{fact.subject}/{fact.category}: {fact.value}" if fact is not None else "?"
