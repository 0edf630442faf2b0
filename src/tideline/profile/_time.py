"""Time for the profile: one sortable UTC text form in the database, aware datetimes in the rules.

Rules take `now` as an argument (never read the clock themselves) so every threshold can be tested
at its exact boundary; the `Profile` service owns the clock and passes it down.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

FORMAT = "%Y-%m-%dT%H:%M:%SZ"
DAY = dt.timedelta(days=1)

Clock = Callable[[], dt.datetime]


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def to_text(value: dt.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).strftime(FORMAT)


def from_text(value: str) -> dt.datetime:
    return dt.datetime.strptime(value, FORMAT).replace(tzinfo=dt.UTC)


def maybe(value: str | None) -> dt.datetime | None:
    return None if value is None else from_text(value)


def days_between(start: dt.datetime, end: dt.datetime) -> float:
    """Fractional days, so a threshold of 730 days is met at the exact second, not a day late."""
    return (end - start) / DAY
