"""The time-window stage of `retrieve`: a question that says *when* is searched in that time.

"What did I do last May", "on 8 May 2023", "before the trip": the owner reads the question into
a `Window` of valid time (`tideline.clock.when` and `anchor`, the calendar's events for "the
trip"; relative words against the caller's today or the newest turn, never the wall clock) and
passes a `TimeWindow`: that window and the owner's scope narrowed to the records of that time
(the turns said then, the narratives whose valid time falls in it). `retrieve` searches the
narrowed scope with the same query and, by `Policy.window`:
- a weight w > 0 (lift): each record found there is lifted as a key lifts (`_levers.lift`: its
  score rescaled so the window's best adds w × the list's best); a record found only there joins;
- `restrict`: the same lift at weight 1, then the list keeps only the records found in the
  window; when none of them clears the floor, the search answers from any time (the whole list)
  and says so in a warning, rather than answering "nothing relevant" wrongly.
Every hit found in the window names it in its explanation ("in last May: 1–31 May 2023"; a
turn's with the slack its scope took: "…, give or take 3 days"), and a search whose turns or
memories were found in the window never also says it found nothing there.
A question that names no time (no `TimeWindow`) is searched as before, byte for byte.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tideline.clock import EARLIEST, LATEST, Window
from tideline.errors import ConfigError
from tideline.search._hits import Hit, during
from tideline.search._levers import lift

#: `Policy.window`: 0 (off), a lift weight, or "restrict".
WindowSetting = float | Literal["restrict"]
RESTRICT: Literal["restrict"] = "restrict"
NAME = "window"


@dataclass(frozen=True)
class TimeWindow:
    """The stretch of valid time a question asks about and the owner's scope narrowed to it
    (a `Scope`, typed loosely: `_retrieve` owns that type); `texts` looks its records up for
    the verbatim check."""

    window: Window
    scope: object
    texts: Callable[[Sequence[int]], Mapping[int, str]] | None = None
    slack: int = 0  # days the scope reaches past each bounded end of `window`

    @property
    def described(self) -> str:
        """The window for people, with the slack its scope took: "last May: 1–31 May 2023",
        "before the trip: until 9 June 2023, give or take 3 days"."""
        slack = f", give or take {self.slack} days" if self.slack else ""
        return describe(self.window) + slack


def _day(moment: dt.datetime) -> str:
    return f"{moment.day} {moment:%B %Y}"


def describe(window: Window) -> str:
    """`window` as its words and its days, no raw times."""
    start, end = window.start, window.end
    if start <= EARLIEST and end >= LATEST:
        days = "any time"
    elif start <= EARLIEST:
        days = f"until {_day(end)}"
    elif end >= LATEST:
        days = f"from {_day(start)}"
    elif start.date() == end.date():
        days = _day(start)
    elif (start.year, start.month) == (end.year, end.month):
        days = f"{start.day}–{end.day} {end:%B %Y}"
    elif start.year == end.year:
        days = f"{start.day} {start:%B} – {_day(end)}"
    else:
        days = f"{_day(start)} – {_day(end)}"
    return f"{window.phrase}: {days}" if window.phrase else days


def within(
    hits: Sequence[Hit], inside: Sequence[Hit], frame: TimeWindow, setting: WindowSetting
) -> tuple[list[Hit], list[Hit] | None]:
    """The stage: `hits` with the records of `inside` (the narrowed search's hits, best first)
    lifted and marked with the window, and — when restricting — only those; the second item is
    the list to fall back on (restrict only: `hits` as they were)."""
    weight = 1.0 if setting == RESTRICT else float(setting)
    extra = {h.id: h.score for h in inside}
    if weight <= 0 or max(extra.values(), default=0.0) <= 0:  # nothing in the window
        return ([], list(hits)) if setting == RESTRICT else (list(hits), None)
    lifted = lift(hits, extra, weight, NAME)  # copies every hit
    found = {h.id for h in inside}
    described = frame.described
    for h in lifted:
        if h.source == 0 and h.id in found:
            h.window = described
    if setting != RESTRICT:
        return lifted, None
    return [h for h in lifted if h.window is not None], list(hits)


NOTHING_IN = "nothing relevant said "


def nothing_in(frame: TimeWindow) -> str:
    """The warning of a restricted search that found nothing relevant in its window."""
    return f"{NOTHING_IN}{during(frame.described)}; showing results from any time"


def found_nothing_in(warning: str) -> bool:
    """Whether `warning` is `nothing_in`'s: void once another search of the same question
    found records in the window."""
    return warning.startswith(NOTHING_IN)


def window_setting(value: str | float) -> WindowSetting:
    """`search_time_window` as `Policy.window`: `off` (0), `restrict`, or a lift weight 0–4."""
    text = str(value).strip().lower()
    if text == RESTRICT:
        return RESTRICT
    if text == "off":
        return 0.0
    try:
        weight = float(text)
    except ValueError:
        weight = -1.0
    if not 0.0 <= weight <= 4.0:
        raise ConfigError(
            f"setting search_time_window={value!r} is unknown; TIDELINE_SEARCH_TIME_WINDOW must "
            "be off, restrict or a lift weight from 0 to 4"
        )
    return weight
