"""How long a fact stays believed: expiry, the maturity table and injection weight. Pure rules.

- A fact expires `decay_days` after it was last seen (`last_seen_at`, refreshed by every
  supporting mention); `decay_days=None` never expires.
- Maturity (step 8): an old, well-evidenced fact earns a longer life. Age counts from
  `valid_from` to the last moment the fact lived (its expiry, or now), in valid time; evidence
  counts supporting rows. The first rung that matches wins; decay never shortens.
- Anchors (facts the trajectory names, e.g. a native language) need 40 % less: both the age and
  the evidence thresholds are multiplied by 0.6 and compared exactly, so for whole evidence counts
  the anchor rungs are 438 d & 6, 219 d & 4 (3.6 rounds up: 3 is below 3.6), 54 d & 2 (1.8 → 2).
- Injection weight: full until the last quarter of a fact's life, then falling linearly to 0.3 at
  the moment it expires; an expired fact weighs 0 (it leaves the active profile).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from tideline.clock import DAY, days_between, from_text, to_text
from tideline.profile._records import ACTIVE_STATUSES, Fact


@dataclass(frozen=True)
class Rung:
    min_age_days: float
    min_evidence: float
    decay_days: int


MATURITY: tuple[Rung, ...] = (Rung(730, 10, 730), Rung(365, 6, 365), Rung(90, 3, 180))
ANCHOR_FACTOR = 0.6  # anchors' thresholds −40 %
FADE_SHARE = 0.25  # the last quarter of a fact's life fades
FADE_FLOOR = 0.3  # the weight just before expiry


def expires_at(last_seen_at: str, decay_days: int | None) -> str | None:
    """When a fact seen at `last_seen_at` stops being believed without new evidence."""
    if decay_days is None:
        return None
    return to_text(from_text(last_seen_at) + decay_days * DAY)


def is_expired(fact: Fact, now: dt.datetime) -> bool:
    return fact.expires_at is not None and from_text(fact.expires_at) <= now


def thresholds(anchor: bool) -> tuple[Rung, ...]:
    """The maturity table, or its anchor version with every threshold × 0.6."""
    if not anchor:
        return MATURITY
    f = ANCHOR_FACTOR
    return tuple(Rung(r.min_age_days * f, r.min_evidence * f, r.decay_days) for r in MATURITY)


def matured_decay(fact: Fact, now: dt.datetime, *, anchor: bool = False) -> int | None:
    """The longer decay the fact earned while it was believed, or None when it keeps its own.

    Judged in valid time: its age at the last moment it lived — its expiry, or `now` when that
    is later — and judged again after each longer life it earns. So a fact old and evidenced
    enough before it would have expired matures even when the run happens years later, and the
    answer depends on its evidence only, never on when a run looked."""
    if fact.status not in ACTIVE_STATUSES or fact.decay_days is None:
        return None
    days, start = fact.decay_days, from_text(fact.valid_from)
    while True:
        end = min(now, from_text(fact.last_seen_at) + days * DAY)
        earned = next(
            (
                rung.decay_days
                for rung in thresholds(anchor)
                if days_between(start, end) >= rung.min_age_days
                and fact.evidence_count >= rung.min_evidence
            ),
            None,
        )
        if earned is None or earned <= days:
            return days if days > fact.decay_days else None
        days = earned


def injection_weight(fact: Fact, now: dt.datetime) -> float:
    """1.0 for most of a fact's life, fading to 0.3 near expiry; 0 once expired or final."""
    if fact.status not in ACTIVE_STATUSES:
        return 0.0
    if fact.expires_at is None or not fact.decay_days:
        return 1.0
    left = days_between(now, from_text(fact.expires_at))
    if left <= 0:
        return 0.0
    share = left / fact.decay_days
    if share >= FADE_SHARE:
        return 1.0
    return FADE_FLOOR + (1.0 - FADE_FLOOR) * share / FADE_SHARE
