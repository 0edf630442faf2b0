"""Dates in questions: "on 8 May, 2023", "in December 2023", "in 2022", "last week".

A question that names a time ("What did Tim say about his injury on 16 November, 2023?") is about
what was said then. `date_window` turns the first such expression into an inclusive (since,
until) window of stored timestamps, widened by `SLACK_DAYS` (people mention a thing a few days
after it happened, and the date a question names is often the day it was talked about).
Relative expressions ("last week", "yesterday") are read against `today`, the latest turn's day.
A question without a date gets None and is searched as before.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

from tideline.clock import add_days, to_text

SLACK_DAYS = 3
_MONTHS = {m.lower(): n for n, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): n for n, m in enumerate(calendar.month_abbr) if m})
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(
    rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH})\.?,?\s+(?P<y>(?:19|20)\d\d)\b"
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b(?P<m>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>(?:19|20)\d\d)\b"
)
_MONTH_YEAR = re.compile(rf"\b(?P<m>{_MONTH})\.?,?\s+(?:of\s+)?(?P<y>(?:19|20)\d\d)\b")
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+(?P<y>(?:19|20)\d\d)\b")
_RELATIVE = {
    "yesterday": (1, 1),
    "last week": (7, 7),
    "last weekend": (7, 3),
    "last month": (31, 31),
    "last year": (365, 365),
}


def _window(start: dt.date, end: dt.date, slack: int) -> tuple[str, str]:
    since = dt.datetime.combine(add_days(start, -slack), dt.time.min)
    until = dt.datetime.combine(add_days(end, slack), dt.time.max)
    return to_text(since), to_text(until)


def date_window(
    question: str, today: dt.date | None = None, slack: int = SLACK_DAYS
) -> tuple[str, str] | None:
    """The (since, until) window the question's first date expression names, or None."""
    found = dated(question, today, slack)
    return found[0] if found else None


def relative(question: str) -> bool:
    """Whether `question` holds a relative expression ("last week"): only those are read
    against today (a caller need not look today up for the others)."""
    text = question.lower()
    return any(re.search(rf"\b{phrase}\b", text) for phrase in _RELATIVE)


def dated(
    question: str, today: dt.date | None = None, slack: int = SLACK_DAYS
) -> tuple[tuple[str, str], str] | None:
    """The window the question's first date expression names and the words that name it
    (lower-cased: the turns said then hold them, though their text does not), or None."""
    text = question.lower()
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        m = pattern.search(text)
        if m:
            try:
                day = dt.date(int(m["y"]), _MONTHS[m["m"]], int(m["d"]))
            except ValueError:
                continue
            return _window(day, day, slack), m[0]
    m = _MONTH_YEAR.search(text)
    if m:
        year, month = int(m["y"]), _MONTHS[m["m"]]
        last = calendar.monthrange(year, month)[1]
        return _window(dt.date(year, month, 1), dt.date(year, month, last), slack), m[0]
    m = _YEAR.search(text)
    if m:
        year = int(m["y"])
        return _window(dt.date(year, 1, 1), dt.date(year, 12, 31), slack), m[0]
    if today is not None:
        for phrase, (back, length) in _RELATIVE.items():
            if re.search(rf"\b{phrase}\b", text):
                start = add_days(today, -back)
                return _window(start, add_days(start, length), slack), phrase
    return None
