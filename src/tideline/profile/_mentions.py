"""Merging a mention of a person into what we know of them. Pure rule, no SQL.

Seed step 2: an existing relationship is merged, not duplicated: the mention count grows, new
details are appended (details already known are not repeated), a given relation replaces the old
one, and a status change is appended to the history with its time. Times: `at` is when the
mention was said (valid time), `now` when it is recorded; mentions heard out of order (an older
session imported later) widen first/last seen without moving them inwards.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace

from tideline.profile._drafts import PersonMention
from tideline.profile._records import Relationship

DETAIL_SEPARATOR = "; "


def person_key(name: str) -> str:
    """One key per person however the name is typed: NFKC, case-folded, single spaces."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", name)).strip().casefold()


def merge_mention(
    known: Relationship | None, mention: PersonMention, at: str, now: str
) -> Relationship:
    """The relationship after this mention said at `at` (id 0 when the person is new)."""
    if known is None:
        status = mention.status or "active"
        return Relationship(
            id=0,
            name=mention.name,
            relation=mention.relation,
            details=mention.details,
            mention_count=1,
            status=status,
            history=[{"status": status, "at": at, "recorded_at": now}],
            first_seen_at=at,
            last_seen_at=at,
            created_at=now,
            updated_at=now,
        )
    details = known.details
    parts = [p.strip() for p in details.split(DETAIL_SEPARATOR) if p.strip()]
    for new in (p.strip() for p in mention.details.split(DETAIL_SEPARATOR)):
        if new and new.casefold() not in (p.casefold() for p in parts):
            parts.append(new)
    history = list(known.history)
    status = known.status
    if mention.status and mention.status != known.status:
        status = mention.status
        history.append({"status": status, "at": at, "recorded_at": now, "was": known.status})
    return replace(
        known,
        relation=mention.relation or known.relation,
        details=DETAIL_SEPARATOR.join(parts),
        mention_count=known.mention_count + 1,
        status=status,
        history=history,
        first_seen_at=min(known.first_seen_at, at),
        last_seen_at=max(known.last_seen_at, at),
        updated_at=now,
    )
