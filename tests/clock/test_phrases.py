"""Time expressions read against when they were said (`tideline.clock.when`).

Said on Tuesday 27 June 2023 at 10:37 (the reference), each phrase names a window of whole days.
"""

from __future__ import annotations

import datetime as dt

import pytest

from tideline.clock import Window, when

SAID = dt.datetime(2023, 6, 27, 10, 37, tzinfo=dt.UTC)  # a Tuesday

CASES = [
    # English: days, counted, calendar units, named months and weekdays, dates
    ("Yesterday I went to a support group.", "2023-06-26", "2023-06-26"),
    ("we went camping last weekend", "2023-06-24", "2023-06-25"),
    ("the day before yesterday", "2023-06-25", "2023-06-25"),
    ("I flew home two days ago", "2023-06-25", "2023-06-25"),
    ("a week ago", "2023-06-19", "2023-06-25"),
    ("I start in two weeks", "2023-07-10", "2023-07-16"),
    ("a couple of years ago", "2021-01-01", "2021-12-31"),
    ("last week was rough", "2023-06-19", "2023-06-25"),
    ("next month we move", "2023-07-01", "2023-07-31"),
    ("this year", "2023-01-01", "2023-12-31"),
    ("What did I do last May?", "2023-05-01", "2023-05-31"),
    ("back in March", "2023-03-01", "2023-03-31"),
    ("late May", "2023-05-22", "2023-05-31"),  # its last ten days
    ("last Friday", "2023-06-23", "2023-06-23"),
    ("on Friday we met", "2023-06-23", "2023-06-23"),
    ("last summer", "2022-06-01", "2022-08-31"),
    ("earlier this week", "2023-06-26", "2023-06-27"),
    ("on 8 May, 2023", "2023-05-08", "2023-05-08"),
    ("May 8th", "2023-05-08", "2023-05-08"),
    ("in December 2022", "2022-12-01", "2022-12-31"),
    ("in 2021", "2021-01-01", "2021-12-31"),
    ("2023-05-08", "2023-05-08", "2023-05-08"),
    # Russian
    ("вчера ходила в бассейн", "2023-06-26", "2023-06-26"),
    ("на прошлой неделе", "2023-06-19", "2023-06-25"),
    ("три дня назад", "2023-06-24", "2023-06-24"),
    ("через неделю", "2023-07-03", "2023-07-09"),
    ("в прошлом месяце", "2023-05-01", "2023-05-31"),
    ("в мае", "2023-05-01", "2023-05-31"),
    ("8 мая 2023 года", "2023-05-08", "2023-05-08"),
    # Chinese
    ("我昨天去了医院", "2023-06-26", "2023-06-26"),
    ("上个月搬家了", "2023-05-01", "2023-05-31"),
    ("三天前", "2023-06-24", "2023-06-24"),
    ("两个月前", "2023-04-01", "2023-04-30"),
    ("去年夏天", "2022-01-01", "2022-12-31"),
    ("2023年5月8日", "2023-05-08", "2023-05-08"),
    ("五月", "2023-05-01", "2023-05-31"),
    ("这个周末", "2023-07-01", "2023-07-02"),
]


@pytest.mark.parametrize(("text", "first", "last"), CASES)
def test_a_phrase_names_the_days_it_means(text: str, first: str, last: str) -> None:
    found = when(text, SAID)
    assert found is not None, text
    assert (found.since, found.until) == (f"{first}T00:00:00Z", f"{last}T23:59:59Z")
    assert found.phrase.casefold() in text.casefold()


@pytest.mark.parametrize("text", ["I may go", "once a week", "it took two weeks", "Mondays"])
def test_words_that_only_look_like_time_name_nothing(text: str) -> None:
    assert when(text, SAID) is None


def test_the_first_expression_wins_and_the_longer_one_at_a_place() -> None:
    found = when("On 8 May 2023 — no, yesterday", SAID)
    assert found is not None and found.phrase == "8 May 2023"


def test_a_window_contains_stored_times_and_widens() -> None:
    w = when("yesterday", SAID)
    assert isinstance(w, Window)
    assert w.contains("2023-06-26T12:00:00Z") and not w.contains("2023-06-27T00:00:00Z")
    wide = w.widened(3)
    assert (wide.since, wide.until) == ("2023-06-23T00:00:00Z", "2023-06-29T23:59:59Z")


def test_a_date_without_a_year_is_the_nearest_one() -> None:
    found = when("on 2 January", dt.date(2023, 12, 30))
    assert found is not None and found.since == "2024-01-02T00:00:00Z"
