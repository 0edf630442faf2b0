"""Valid time from evidence: when something was said, worked out in one place. Pure rules.

What Sleep learns from a conversation is valid when its turns were said (their own timestamps),
not when Sleep ran: an observation is said at its earliest turn; a fact is valid from its earliest
evidence and last seen at its latest; an end is never before its start. The pipeline's working
projection and `Profile.apply` both call these, so a fact's start in the projection (what a
later step compares with) is exactly the start stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tideline.profile._records import Fact


def first_said(
    turn_ids: Iterable[int], times: Mapping[int, str], also: Iterable[str | None] = ()
) -> str | None:
    """The earliest of these turns' times (and of `also`), or None when none is known."""
    found = [times[t] for t in turn_ids if t in times] + [a for a in also if a]
    return min(found) if found else None


def last_said(
    turn_ids: Iterable[int], times: Mapping[int, str], also: Iterable[str | None] = ()
) -> str | None:
    """The latest of these turns' times (and of `also`), or None when none is known."""
    found = [times[t] for t in turn_ids if t in times] + [a for a in also if a]
    return max(found) if found else None


def end_at(start: str, at: str) -> str:
    """An end in valid time: `at`, but never before `start` (the stored form sorts as text)."""
    return max(start, at)


def question_time(kind: str, fact: Fact) -> str:
    """When a strategy's question arose in the user's life: a verify question when its fact
    ended (or expires), a clarify or probe question when its fact began."""
    if kind == "verify":
        return fact.valid_to or fact.expires_at or fact.last_seen_at
    return fact.valid_from
