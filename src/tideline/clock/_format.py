"""The one stored time form, and reading the times people and clients send into it."""

from __future__ import annotations

import datetime as dt

from tideline.clock._clock import Clock
from tideline.errors import InvalidInput

FORMAT = "%Y-%m-%dT%H:%M:%SZ"
DAY = dt.timedelta(days=1)
#: The times Tideline accepts from people and clients (UTC, inclusive): every time a conversation
#: was had or a thing happened in a life, and seven thousand years from the calendar's ends
#: (years 1 and 9999), so that what the time words make of them ("next year", "3 weeks ago")
#: stays a date (issue 31: one turn dated 9999-12-31 broke every "tomorrow").
FIRST_ACCEPTED = "1900-01-01T00:00:00Z"
LAST_ACCEPTED = "2999-12-31T23:59:59Z"


def to_text(value: dt.datetime) -> str:
    """The stored form of `value` (naive means UTC). Written out by hand: `strftime("%Y")`
    drops the zeros of a year before 1000 on glibc, and the form must sort as text."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    v = value.astimezone(dt.UTC)
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}Z"


def from_text(value: str) -> dt.datetime:
    """An aware UTC datetime from the stored form (anything else is a ValueError)."""
    return dt.datetime.strptime(value, FORMAT).replace(tzinfo=dt.UTC)


def now_text(clock: Clock) -> str:
    """What `clock` says, in the stored form."""
    return to_text(clock())


def days_between(start: dt.datetime, end: dt.datetime) -> float:
    """Fractional days, so a threshold of 730 days is met at the exact second, not a day late."""
    return (end - start) / DAY


def parse_time(
    value: str | None, field: str = "timestamp", *, end_of_day: bool = False
) -> str | None:
    """ISO 8601 (date, or date and time, optional zone; naive means UTC) → stored form, within
    `FIRST_ACCEPTED`–`LAST_ACCEPTED`.

    `end_of_day`: a bare date means its last second (for inclusive `until` bounds, so
    `until=2026-06-15` keeps what happened on the 15th).
    """
    if value is None or value == "":
        return None
    text = str(value).strip()
    if end_of_day and len(text) == 10:
        text += "T23:59:59"
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(
            f"{field}={value!r} is not an ISO 8601 time; use e.g. 2026-11-30 or 2026-11-30T14:05:00Z"
        ) from None
    try:
        stored = to_text(parsed)
    except OverflowError:  # 0001-01-01T00:00+05:00 is a time in year 0 UTC, which Python lacks
        stored = ""
    if not FIRST_ACCEPTED <= stored <= LAST_ACCEPTED:
        raise InvalidInput(
            f"{field}={value!r} is outside the times Tideline accepts (years 1900–2999 in UTC); "
            f"use a time between {FIRST_ACCEPTED[:10]} and {LAST_ACCEPTED[:10]}"
        )
    return stored
