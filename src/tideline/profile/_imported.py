"""Facts a peer's memory held, kept in the profile with the imported turns as evidence.

An MCP memory server's observations, mem0's memories and the lines of a Letta memory block are
facts someone already decided to keep; `tideline import` stores each as a turn (the words, with
their time) and hands them here. Each becomes a suspected, stated fact backed by its turn and
valid from that turn's time, and the lifecycle treats it like any other. It has no decay: the
peer still held it when the file was written, and later evidence, not an age, should retire it.
A fact already in the profile (same subject, category and value, whatever its status: one a
person rejected stays rejected) is not added again, so importing twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tideline.errors import InvalidInput
from tideline.memory import FoundFact
from tideline.profile._changeset import Changeset
from tideline.profile._dedupe import normalise
from tideline.profile._drafts import FactDraft

Key = tuple[str, str, str]


def fact_changes(
    found: Sequence[FoundFact], known: Iterable[Key], base_version: int
) -> tuple[Changeset, int, list[str]]:
    """The changeset adding the facts of `found` not `known` (keys by `normalise`), how many
    were already there, and why each fact that breaks a rule (a value over 4,000 characters,
    a name over 200) was not added: its turn is kept all the same."""
    seen = set(known)
    refused: list[str] = []
    changes = Changeset(base_version)
    existing = 0
    for f in found:
        key = (normalise(f.fact.subject), normalise(f.fact.category), normalise(f.fact.value))
        if key in seen:
            existing += 1
            continue
        seen.add(key)
        try:
            draft = FactDraft(
                f.fact.subject, f.fact.category, f.fact.value, decay_days=None, valid_from=f.said_at
            )
        except InvalidInput as exc:
            refused.append(f"turn {f.turn_id}: kept as a turn, not as a fact: {exc}")
            continue
        changes.add_fact(draft, turn_ids=(f.turn_id,))
    return changes, existing, refused
