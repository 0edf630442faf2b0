"""The deterministic Sleep steps as changeset planners: read facts in, changes out. No SQL, no LLM.

- step 5 fast path: stated & mention_count ≥ 2 & suspected → confirmed
- step 8 expiry: expires_at passed → closed at expires_at, plus a verify strategy; events likewise
  closed (without a strategy), the ones this changeset makes too: an event mentioned long after
  it ended is recorded and closed in the same run, never listed as active
- step 9 maturity: the decay table (`_decay.MATURITY`, anchors × 0.6)
- step 12 dedupe: duplicates merged into the one kept (`_dedupe`)
Each returns the ids it planned for, so the run record can say what changed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable

from tideline.clock import from_text
from tideline.profile._changeset import Changeset, Ref
from tideline.profile._decay import expires_at, is_expired, matured_decay
from tideline.profile._dedupe import duplicates
from tideline.profile._drafts import EventDraft
from tideline.profile._lifecycle import FAST_PATH_MENTIONS, fast_path
from tideline.profile._types import ACTIVE_STATUSES, Event, Fact


def verify_question(fact: Fact) -> str:
    """The default verify question; the agent asks it in its own words."""
    who = "you" if fact.subject == "user" else fact.subject
    return f"Is this still true for {who}? {fact.category}: {fact.value}"


def plan_fast_path(facts: Iterable[Fact], changeset: Changeset) -> list[int]:
    done = []
    for fact in facts:
        if fast_path(fact):
            changeset.confirm(fact.id, f"stated and mentioned {FAST_PATH_MENTIONS}+ times")
            done.append(fact.id)
    return done


def event_expiry(draft: EventDraft) -> str | None:
    """When an event stops being relevant: `decay_days` after its range ends (valid time)."""
    start = draft.valid_from or draft.said_at
    return (
        None if start is None else expires_at(max(draft.valid_to or start, start), draft.decay_days)
    )


def plan_expiry(
    facts: Iterable[Fact],
    events: Iterable[Event],
    now: dt.datetime,
    changeset: Changeset,
    new_events: Iterable[tuple[Ref, EventDraft]] = (),
) -> list[int]:
    done = []
    for fact in facts:
        if fact.status in ACTIVE_STATUSES and is_expired(fact, now):
            changeset.close(fact.id, why="expired", at=fact.expires_at)
            changeset.add_strategy("verify", fact.id, verify_question(fact))
            done.append(fact.id)
    for event in events:
        if event.status == "active" and event.expires_at and from_text(event.expires_at) <= now:
            changeset.close_event(event.id, at=event.expires_at)
    for ref, draft in new_events:
        ends = event_expiry(draft)
        if ends is not None and from_text(ends) <= now:
            changeset.close_event(ref, at=ends)
    return done


def plan_maturity(
    facts: Iterable[Fact], now: dt.datetime, changeset: Changeset, anchors: Collection[int] = ()
) -> list[int]:
    """Longer decay for facts that earned it; expired facts are left to `plan_expiry`."""
    done = []
    for fact in facts:
        if is_expired(fact, now):
            continue
        days = matured_decay(fact, now, anchor=fact.id in anchors)
        if days is not None:
            changeset.set_decay(fact.id, days)
            done.append(fact.id)
    return done


def plan_dedupe(facts: Iterable[Fact], changeset: Changeset) -> list[int]:
    done = []
    for group in duplicates(list(facts)):
        for drop in group.drop:
            changeset.merge(group.keep.id, drop.id)
            done.append(drop.id)
    return done
