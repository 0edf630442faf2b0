"""The profile as it stood on a date in the user's time ("as of"). Pure rules over the rows.

Valid time, not record time: "as of 15 June 2023" is what was true and believed in the user's
life that day, by everything Tideline knows now — an imported 2023 conversation answers for 2023
although it was learnt in 2026. For a fact that means:

- it had begun (`valid_from` ≤ the date) and had not ended (`valid_to` after it, or none);
- it had not lapsed: heard last (its latest supporting evidence said by then) longer ago than its
  `decay_days`, a fact was no longer believed — even if it was heard again later;
- it is shown as it was then: its status by the changes that took effect by then, its mentions
  and evidence the ones said by then, its expiry from its last mention by then;
- rejected facts (wrong all along) and merged duplicates (the fact kept stands for them) never
  show; the decay is today's (a lengthening by the maturity table is not dated).

Events are shown when they had begun or had been mentioned by then and had neither expired nor
been closed; people once first mentioned, with the status their history gave them then; edges
and strategies while they held. A bare date means its end (everything said that day counts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tideline.profile._decay import expires_at
from tideline.profile._records import (
    ACTIVE_STATUSES,
    Edge,
    Event,
    Fact,
    Relationship,
    StatusChange,
    Strategy,
    _Dict,
)


def fact_at(fact: Fact, changes: Sequence[StatusChange], at: str) -> Fact | None:
    """`fact` as it stood at `at` (a copy), or None when it was not believed then."""
    if fact.status == "rejected" or fact.merged_into is not None:
        return None
    if fact.valid_from > at or (fact.valid_to is not None and fact.valid_to <= at):
        return None
    heard = [e for e in fact.evidence if (e.said_at or e.created_at) <= at]
    support = [e for e in heard if e.polarity == "support"]
    last = max([fact.valid_from, *((e.said_at or e.created_at) for e in support)])
    ends = expires_at(last, fact.decay_days)
    if ends is not None and ends <= at:
        return None  # lapsed by then: not heard again within its life
    moves = [c for c in changes if c.fact_id == fact.id and c.at <= at]
    status = next(
        (c.to_status for c in reversed(moves) if c.to_status in ACTIVE_STATUSES), "suspected"
    )
    return dataclasses.replace(
        fact,
        status=status,
        mention_count=max(1, len({(e.turn_id, e.observation_id) for e in support})),
        last_seen_at=last,
        expires_at=ends,
        valid_to=None,
        evidence=heard,
        evidence_count=len(support),
    )


def facts_at(facts: Iterable[Fact], changes: Sequence[StatusChange], at: str) -> list[Fact]:
    """The facts believed at `at`, each as it stood then."""
    return [f for f in (fact_at(f, changes, at) for f in facts) if f is not None]


def event_at(event: Event, at: str) -> Event | None:
    """`event` if it had begun or been mentioned by `at` and was still relevant then."""
    known = event.valid_from <= at or (event.said_at or event.created_at) <= at
    lapsed = event.expires_at is not None and event.expires_at <= at
    closed = event.closed_at is not None and event.closed_at <= at
    if not known or lapsed or closed:
        return None
    return dataclasses.replace(event, status="active", closed_at=None, retired_at=None)


def events_at(events: Iterable[Event], at: str) -> list[Event]:
    return [e for e in (event_at(e, at) for e in events) if e is not None]


def person_at(person: Relationship, at: str) -> Relationship | None:
    """`person` once first mentioned by `at`, with the status their history gave them then."""
    if person.first_seen_at > at:
        return None
    history = [h for h in person.history if str(h.get("at", "")) <= at]
    status = str(history[-1]["status"]) if history else person.status
    return dataclasses.replace(person, status=status, history=history)


def people_at(people: Iterable[Relationship], at: str) -> list[Relationship]:
    return [p for p in (person_at(p, at) for p in people) if p is not None]


def held_at(valid_from: str | None, valid_to: str | None, at: str) -> bool:
    """Whether a span of valid time (an edge, a strategy) held at `at`."""
    return valid_from is not None and valid_from <= at and (valid_to is None or valid_to > at)


def edges_at(edges: Iterable[Edge], at: str, shown: set[int]) -> list[Edge]:
    """The links that held at `at` between facts shown then."""
    return [
        dataclasses.replace(e, removed_at=None, valid_to=None)
        for e in edges
        if held_at(e.valid_from, e.valid_to, at) and {e.from_fact, e.to_fact} <= shown
    ]


def strategies_at(strategies: Iterable[Strategy], at: str) -> list[Strategy]:
    """The questions that stood open at `at`, as they stood then: open, however they ended
    since (when one was asked is known only in record time)."""
    return [
        dataclasses.replace(
            s, status="open", outcome=None, resolved_why=None, resolved_at=None, valid_to=None
        )
        for s in strategies
        if held_at(s.valid_from, s.valid_to, at)
    ]


@dataclass
class ProfileAt(_Dict):
    """The profile as it stood on one date in the user's time (`Profile.as_of`)."""

    as_of: str  # the moment, in the stored form (a bare date: its last second)
    facts: list[Fact]
    events: list[Event]
    relationships: list[Relationship]
    strategies: list[Strategy]
    edges: list[Edge]
    text: str  # the snapshot as it would have read then
