"""Time for the whole package: the one clock seam and the one stored time form.

- **The clock seam.** Only this package reads the computer's clock. Every service that needs
  "now" takes a `Clock` (a callable returning an aware UTC datetime) from its caller, never by
  default: the composition root (`Tideline`) passes `system_clock`; tests and replays pass a
  `ManualClock` and move it, so a year of history runs in seconds and every threshold can be met
  at its exact second. The machine's own bookkeeping, which a replay must not move (a
  migration's `applied_at`, the store's damage and check notes, a backup's file name), names
  `system_clock` where it stamps; file freshness compares with the mtimes the file system
  stamps through `epoch_seconds` (POSIX seconds, fractions kept: `system_clock` drops them).
- **The stored form.** Every time in a database is `YYYY-MM-DDTHH:MM:SSZ` (UTC, whole
  seconds): one text form that sorts as it reads, on SQLite and PostgreSQL alike. `to_text` /
  `from_text` convert; `parse_time` reads what people and clients send (ISO dates or times,
  any zone) into it, with a one-line error.
- **Two clocks.** Valid time (when something was said or true in the user's life, from the
  turns' own timestamps) and record time (when Tideline learned or retired it) are both stored in
  this form; which column holds which is each owner's docstring (docs/profile.md, "Two clocks").
- **Time expressions.** `when(text, reference)` reads "last week", "yesterday", "last May",
  "вчера", "上个月" against when they were said into a `Window` of valid time: what an event's
  date range comes from, and what a time question ("what did I do last May") asks about;
  `anchor(text)` finds a question tied to something else ("before the trip").
"""

from tideline.clock._clock import Clock, ManualClock, epoch_seconds, system_clock
from tideline.clock._format import (
    DAY,
    FIRST_ACCEPTED,
    FORMAT,
    LAST_ACCEPTED,
    days_between,
    from_text,
    now_text,
    parse_time,
    to_text,
)
from tideline.clock._phrases import (
    EARLIEST,
    LATEST,
    Anchor,
    Window,
    add_days,
    anchor,
    shifted,
    when,
)

__all__ = [
    "DAY",
    "EARLIEST",
    "FIRST_ACCEPTED",
    "FORMAT",
    "LAST_ACCEPTED",
    "LATEST",
    "Anchor",
    "Clock",
    "ManualClock",
    "Window",
    "add_days",
    "anchor",
    "days_between",
    "epoch_seconds",
    "from_text",
    "now_text",
    "parse_time",
    "shifted",
    "system_clock",
    "to_text",
    "when",
]
