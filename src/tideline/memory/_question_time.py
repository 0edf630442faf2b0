"""Which stretch of the user's time a search question names, and memory's records of that time.

Memory owns the knowledge, `tideline.search` the ranking (its time-window stage, `Policy.window`):
- the window: "what did I do last May", "on 8 May 2023" (`tideline.clock.when`) and, through
  the composition root's resolver (`Profile.time_window`), "before the trip" (an anchor on an
  event of the calendar). Relative words are read against the caller's `today` when given, else
  against the newest turn's time — the conversation's present: an imported 2023 conversation's
  "last May" is May 2023, whatever the wall clock says;
- the records of that time: the turns said in it (each bounded end widened by
  `_dates.SLACK_DAYS`: a thing is told a few days after it happened, and what came after the
  trip is often told on the trip's last day), and the narratives whose valid time
  (`created_at`) falls in it. A question whose date the date lever searches already (`_dates`:
  "on 8 May 2023", "in May 2023", "last week", at `turn_date_weight`) is left to it on the
  turns: lifting the same turns twice cost 2 points of recall@10 on those LoCoMo questions.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

from tideline.clock import Window, anchor, from_text, parse_time, when
from tideline.memory._dates import SLACK_DAYS
from tideline.memory._raw import RawContext
from tideline.search import Key, Lever, TimeWindow

#: The composition root's reader of a question's window: (question, today or None) → Window.
Resolver = Callable[[str, str | None], Window | None]


#: Any day: whether a question names a time at all does not depend on when it is read.
_ANY_DAY = dt.date(2000, 1, 1)


def names_time(question: str) -> bool:
    """Whether `question` names a time or ties itself to one ("before the trip"): the cheap
    test before the newest turn is looked up and the calendar read."""
    return anchor(question) is not None or when(question, _ANY_DAY) is not None


def present(raw: RawContext | None, today: str | None, clock_now: dt.datetime) -> dt.datetime:
    """What relative words are read against: `today` (ISO) when given, else noon of the newest
    turn's day (of `raw`, the caller holding its lock), else the clock's now (nothing said
    yet, or no memory)."""
    if today:
        return from_text(parse_time(today, "today") or "")
    day = raw.latest_day() if raw is not None else None
    return from_text(f"{day}T12:00:00Z") if day else clock_now


def plain_resolver(raw: RawContext, clock: Callable[[], dt.datetime]) -> Resolver:
    """A question's window from its own words only (no calendar): what a `Memory` built
    without the profile uses."""

    def resolve(question: str, today: str | None) -> Window | None:
        return when(question, present(raw, today, clock()))

    return resolve


def turns_in(raw: RawContext, window: Window) -> TimeWindow:
    """The turns said in `window`, each bounded end widened by `SLACK_DAYS`."""
    said = window.widened(SLACK_DAYS)
    return TimeWindow(window, raw.filter(said.since, said.until), raw.texts, SLACK_DAYS)


def turns_window(raw: RawContext, asked: Window, keys: Sequence[Lever]) -> TimeWindow | None:
    """The turns' time window for `asked`, or None when the date lever's key (`turn_keys`)
    searches the question's date already."""
    if any(isinstance(key, Key) and key.name == "dates" for key in keys):
        return None
    return turns_in(raw, asked)
