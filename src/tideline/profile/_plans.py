"""The deterministic Sleep steps as changeset planners: read facts in, changes out. No SQL, no LLM.

- step 5 fast path: stated & mention_count ≥ 2 & 2+ sessions & suspected → confirmed, dated when
  its second session said it
- step 8 established: confirmed & N sessions spanning D days of valid time & not disputed, dated
  when that was first true (before expiry: a fact that expired later was still established)
- step 8 maturity: the decay table (`_decay.MATURITY`, anchors × 0.6), judged at valid time
- step 9 expiry: expires_at passed → closed at expires_at, plus a verify strategy; events likewise
  closed (without a strategy), the ones this changeset makes too: an event mentioned long after
  it ended is recorded and closed in the same run, never listed as active
- step 12 dedupe: duplicates merged into the one kept (`_dedupe`)
- strategies (with step 9): answered by a later conversation, or expired (`plan_strategies`)
Each returns the ids it planned for, so the run record can say what changed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Mapping, Sequence

from tideline.clock import from_text, to_text
from tideline.profile._changeset import Because, Changeset, Ref
from tideline.profile._decay import expires_at, is_expired, matured_decay
from tideline.profile._dedupe import duplicates, fact_key, normalise
from tideline.profile._drafts import EventDraft
from tideline.profile._lifecycle import (
    RULES,
    STRATEGY_DAYS,
    Rules,
    establishable,
    fast_path,
    rule_met,
)
from tideline.profile._records import ACTIVE_STATUSES, Event, Fact, Strategy


def verify_question(fact: Fact) -> str:
    """The default verify question; the agent asks it in its own words."""
    who = "you" if fact.subject == "user" else fact.subject
    return f"Is this still true for {who}? {fact.category}: {fact.value}"


def plan_fast_path(facts: Iterable[Fact], changeset: Changeset, rules: Rules = RULES) -> list[int]:
    done = []
    for fact in facts:
        if fast_path(fact, rules):
            met = rule_met(fact, rules.confirm_sessions)
            changeset.confirm(fact.id, f"stated in {met.sessions} sessions", at=met.at)
            done.append(fact.id)
    return done


def plan_established(
    facts: Iterable[Fact], changeset: Changeset, rules: Rules = RULES
) -> list[int]:
    """Confirmed facts that became long-standing and well-evidenced → established, at the time
    the rule was met (valid time), whether or not the fact expired since."""
    done = []
    for fact in facts:
        if establishable(fact, rules):
            met = rule_met(fact, rules.established_sessions, rules.established_days)
            changeset.transition(fact.id, "established", why=str(met), at=met.at)
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
    ending = sorted(facts, key=lambda f: (f.expires_at or "", f.id))  # first ended, first closed:
    for fact in ending:  # a link between two expired facts ends with the first of them
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
    """Longer decay for facts that earned it before they expired (`matured_decay`): run before
    `plan_expiry`, so a fact that matured in time is not closed at its shorter life's end."""
    done = []
    for fact in facts:
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


Heard = Mapping[int, Sequence[tuple[str, str]]]  # fact → when (valid time) and how it was heard


def plan_strategies(
    strategies: Iterable[Strategy],
    facts: Mapping[int, Fact],
    heard: Heard,
    now: dt.datetime,
    changeset: Changeset,
    *,
    days: float = STRATEGY_DAYS,
    ending: bool = False,
) -> dict[str, list[int]]:
    """End the strategies a run's conversations answered, and the ones nobody answered in time.

    `strategies` are the open and asked ones (this run's own included); `facts` holds every fact
    they may name (the retired ones a verify asks after included); `heard` maps each fact this
    run made or gave evidence to → when each of its words was said and how (`supported (turn
    45)`). All is judged in valid time, from when the question arose (`asked_since`) to when it
    lapses `days` later:
    - a clarify or probe is answered when its fact was heard again (supported, doubted or
      contradicted) in that span, settled when it was said;
    - a verify (its fact expired) is answered by a fact with the same subject and category made
      or heard in that span: `still true` when it says the same, else `changed`;
    - one nobody answered in that span expires, settled on the day it lapsed (not the day a run
      noticed) — unless its fact ends first (its expiry, before the lapse, makes it obsolete).
    A clarify or probe about a retired fact is left alone: retiring the fact made it obsolete.
    `ending`: `now` is the moment their fact ends, and words said then (what ended it) answer
    nothing.
    """
    done: dict[str, list[int]] = {"answered": [], "expired": []}
    before = to_text(now) if ending else "~"  # "~" sorts after every stored time
    for s in strategies:
        fact = facts.get(s.fact_id) if s.fact_id is not None else None
        arose = asked_since(s, fact)
        lapse = to_text(from_text(arose) + dt.timedelta(days=days))  # valid time, as an expiry
        answered = False
        if fact is not None and s.kind != "verify":
            if not fact.active:
                continue
            said = _first_heard(heard.get(fact.id, ()), arose, lapse, before)
            if said is not None:
                changeset.resolve_strategy(s.id, "answered", said[1], at=said[0])
                answered = True
            elif fact.expires_at is not None and fact.expires_at < min(lapse, to_text(now)):
                continue  # its fact expires first: the expiry makes it obsolete
        elif fact is not None:
            found = _verify_answer(fact, facts, heard, arose, lapse, before)
            if found is not None:
                answer, at = found
                same = fact_key(answer) == fact_key(fact)
                changeset.resolve_strategy(
                    s.id,
                    "answered",
                    "still true" if same else f"changed: {answer.value}",
                    because=Because("answered by", answer.id),
                    at=at,
                )
                answered = True
        if answered:
            done["answered"].append(s.id)
        elif from_text(lapse) <= now:
            changeset.resolve_strategy(s.id, "expired", f"unanswered for {days:g} days", at=lapse)
            done["expired"].append(s.id)
    return done


def _first_heard(
    said: Iterable[tuple[str, str]], after: str, until: str, before: str
) -> tuple[str, str] | None:
    """The first of these (when, how) said after `after`, by `until` and before `before`."""
    found = ((at, how) for at, how in said if after < at <= until and at < before)
    return min(found, default=None)


def asked_since(strategy: Strategy, fact: Fact | None) -> str:
    """Since when, in the user's time, the question stands: a verify, since its fact expired;
    otherwise since it arose (its stored `valid_from`, `_valid.question_time`, else its fact's
    start), and only for a row that has neither, since it was made."""
    if fact is not None and strategy.kind == "verify" and fact.expires_at:
        return fact.expires_at
    if fact is not None and strategy.kind != "verify":
        return strategy.valid_from or fact.valid_from
    return strategy.valid_from or strategy.created_at


def _verify_answer(
    expired: Fact, facts: Mapping[int, Fact], heard: Heard, after: str, until: str, before: str
) -> tuple[Fact, str] | None:
    """The first fact about the same subject and category made or heard after `after` and by
    `until` (at one time, the same value first), and when: what answered it first in the
    user's time, however the history arrived."""
    key = (normalise(expired.subject), normalise(expired.category))
    found = [
        (f, said[0])
        for f in facts.values()
        if f.id != expired.id
        and (normalise(f.subject), normalise(f.category)) == key
        and (said := _first_heard(heard.get(f.id, ()), after, until, before)) is not None
    ]
    found.sort(key=lambda x: (x[1], fact_key(x[0]) != fact_key(expired), fact_key(x[0])))
    return found[0] if found else None
