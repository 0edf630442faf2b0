"""What memory knows about turns beyond the turn index, handed to `retrieve` as levers.

Memory owns the knowledge, `tideline.search` the ranking (every formula is a stage there):
- dates (`Policy.date_weight`): a question naming a time ("on 16 November, 2023", "in May
  2023") is also searched among the turns said then (widened by a few days, `_dates`), which
  hold the date's words (`Key.holds`);
- memory keys (`Policy.memory_weight`): the narratives that match the query point at their
  source turns (a memory says in other words what its turns said);
- speakers (`Policy.speaker_weight`): the candidates spoken by a person the question names
  (`_speakers`; a name written in Cyrillic too under `Policy.scripts`);
- answers (`Policy.answer_weight`, `answer_demote`) and replies (`Policy.reply_weight`):
  `RawContext.exchanges_of` says which candidates ask a question and which turn answers each
  (`search._levers.Answer`), and which were asked about, by which question, and which turn
  replies (`search._levers.Reply`);
- neighbours (`Policy.neighbour_weight`): `RawContext.neighbours_of` says which turns are
  around each candidate, whose stored vectors `retrieve` reads (`search._levers.Near`);
- sessions (`Policy.session_weight`, `session_cap`): `RawContext.sessions_of` says which
  session each turn belongs to, for the session-level list and for diversity.
Every lever reads the turns through the search's `TurnRows` (`_search_rows`), the memory keys
the narratives through its `NarrativeRows`: each row is read once a search, with all of them.
The keys only apply to an unfiltered search (a filtered one must not gain turns from outside).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from tideline.memory._dates import dated, relative
from tideline.memory._narratives import Narratives
from tideline.memory._raw import RawContext
from tideline.memory._search_rows import NarrativeRows, TurnRows
from tideline.memory._speakers import named
from tideline.search import Answer, Key, Lever, Mark, Near, Policy, Reply, Scope


def turn_keys(
    raw: RawContext,
    narratives: Narratives,
    query: str,
    policy: Policy,
    narrative_policy: Policy,
    *,
    memory_scope: Scope | None = None,
    rows: TurnRows | None = None,
    memories: NarrativeRows | None = None,
) -> list[Lever]:
    """The levers' keys for `query` (see the module docstring); `memory_scope` narrows the
    narratives searched for memory keys (default: all). The levers read the turns through
    `rows`, the memory keys the narratives through `memories`: the search's own
    (`_search_rows`: each row read once a search)."""
    keys: list[Lever] = []
    rows = rows or TurnRows(raw)
    if policy.date_weight:
        # the newest turn's day only for a relative date ("last week"): one statement less
        latest = raw.latest_day() if relative(query) else None
        found = dated(query, dt.date.fromisoformat(latest) if latest else None)
        if found:
            window, phrase = found
            scope = raw.filter(*window)
            keys.append(Key("dates", scope, policy.date_weight, texts=rows.texts, holds=phrase))
    if policy.memory_weight and not narratives.empty():
        memories = memories or NarrativeRows(narratives)
        keys.append(
            Key(
                "memory keys",
                memory_scope or Scope(narratives.index),
                policy.memory_weight,
                policy=narrative_policy,
                targets=memories.sources,
                texts=memories.texts,
            )
        )
    if policy.speaker_weight:

        def spoken(ids: Sequence[int]) -> set[int]:
            by = rows.speakers_of(ids)
            names = named(query, by.values(), by_sound=policy.scripts)
            return {i for i, speaker in by.items() if speaker in names}

        keys.append(Mark("speaker", policy.speaker_weight, spoken))
    if policy.answer_weight or policy.answer_demote:
        keys.append(Answer("answers", policy.answer_weight, rows.answers, policy.answer_demote))
    if policy.reply_weight:
        keys.append(Reply("reply", policy.reply_weight, rows.replies))
    if policy.neighbour_weight:
        keys.append(Near("neighbours", policy.neighbour_weight, rows.neighbours_of))
    return keys
