"""Raw-turn search with what memory knows beyond the turn index (issue 12, docs/search.md).

`retrieve` fuses the turn's lexical and vector lists. Then, each lever with its setting:
- dates (`turn_date_weight`): a question naming a time ("on 16 November, 2023", "in May 2023")
  searches the turns said then (widened by a few days) and adds those scores × the weight;
- memory keys (`turn_memory_weight`): narratives that match the query lift their source turns by
  their fused score × the weight (a memory says in other words what its turns said);
- diversity (`turn_session_cap`): at most that many turns of one session before the other
  sessions had their turn (multi-hop questions need evidence from several).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from tideline.memory._dates import date_window
from tideline.memory._narratives import Narratives
from tideline.memory._raw import RawContext
from tideline.search import (
    Mode,
    Policy,
    QueryVector,
    Retrieval,
    Scope,
    diversify,
    lift,
    resolved,
    retrieve,
)


@dataclass(frozen=True)
class TurnLevers:
    """The re-ordering levers of raw-turn search; 0 switches one off."""

    date_weight: float = 0.0
    memory_weight: float = 0.0
    session_cap: int = 0


def search_turns(
    raw: RawContext,
    narratives: Narratives,
    query: str,
    qvec: QueryVector,
    k: int,
    mode: Mode,
    policy: Policy,
    levers: TurnLevers,
    *,
    scope: Scope,
    narrative_policy: Policy,
    warning: str | None = None,
    memory_scope: Scope | None = None,
) -> Retrieval:
    """The turns for `query` within `scope`, re-ordered by the levers (see the module doc);
    `memory_scope` narrows the narratives searched for memory keys (default: all)."""
    found = retrieve(scope, query, qvec, k, mode, policy, texts=raw.texts, warning=warning)
    vector = resolved(qvec)[0] if found.mode != "lex" else None  # the levers search with it too
    hits = found.hits
    unfiltered = scope.where is None  # the levers may add turns: only when nothing is filtered
    if levers.date_weight and unfiltered:
        latest = raw.latest_day()
        today = dt.date.fromisoformat(latest) if latest else None
        window = date_window(query, today)
        if window:
            inside = raw.filter(*window)
            then = retrieve(inside, query, vector, k, mode, policy, texts=raw.texts)
            hits = lift(hits, {h.id: h.score for h in then.hits}, levers.date_weight)
    if levers.memory_weight and unfiltered and not narratives.empty():
        memories = retrieve(
            memory_scope or Scope(narratives.index),
            query,
            vector,
            k,
            mode,
            narrative_policy,
            texts=narratives.texts,
        ).top(k)
        sources: dict[int, float] = {}
        score = {h.id: h.score for h in memories}
        for n in narratives.get([h.id for h in memories]):
            for turn in n.source_links:
                sources[turn] = max(sources.get(turn, 0.0), score[n.id])
        hits = lift(hits, sources, levers.memory_weight)
    if levers.session_cap:
        head = hits[: k * 2]
        hits = diversify(head, raw.sessions_of([h.id for h in head]), levers.session_cap)
    return Retrieval(hits, found.mode, found.warnings)
