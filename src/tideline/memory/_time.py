"""Timestamps: parse what callers send, store one sortable UTC form."""

from __future__ import annotations

import datetime as dt

from tideline.errors import InvalidInput

FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime(FORMAT)


def to_iso(value: dt.datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC).strftime(FORMAT)


def parse_time(
    value: str | None, field: str = "timestamp", *, end_of_day: bool = False
) -> str | None:
    """ISO 8601 (date, or date and time, optional zone; naive means UTC) → stored form.

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
        return to_iso(parsed)
    except OverflowError:  # 0001-01-01T00:00+05:00 is a time in year 0 UTC, which Python lacks
        raise InvalidInput(
            f"{field}={value!r} is outside the years 1–9999 once converted to UTC; "
            "use a time between 0001-01-02 and 9999-12-30"
        ) from None
