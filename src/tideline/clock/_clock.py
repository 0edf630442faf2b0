"""The clock seam: a callable that says what time it is, passed down from the composition root."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

Clock = Callable[[], dt.datetime]


def system_clock() -> dt.datetime:
    """The wall clock, in UTC, to the whole second (the stored form keeps no fractions)."""
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def epoch_seconds() -> float:
    """The wall clock in POSIX seconds, fractions kept: the clock the file system stamps mtimes
    with, for comparing with them (sub-second races) and for expiries kept as numbers."""
    return time.time()


class ManualClock:
    """A clock that moves only when told: tests and replays set it to a turn's time, or advance
    it by a day, instead of sleeping. Naive datetimes are read as UTC."""

    def __init__(self, now: dt.datetime):
        self.now = _aware(now)

    def __call__(self) -> dt.datetime:
        return self.now

    def set(self, now: dt.datetime) -> dt.datetime:
        self.now = _aware(now)
        return self.now

    def advance(self, **delta: float) -> dt.datetime:
        """Move forward (or back, with negative amounts) by `timedelta(**delta)`."""
        self.now += dt.timedelta(**delta)
        return self.now


def _aware(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
