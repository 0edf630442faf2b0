"""Time expressions → windows of valid time: "last week", "yesterday", "last May", "вчера", "上个月".

A person says when something happened relative to when they said it: "we went camping last
weekend" said on Tuesday 27 June 2023 is the weekend of 24–25 June. `when(text, reference)` finds
the first time expression in `text` and resolves it against `reference` (the turn's own timestamp
for a conversation; the conversation's present for a question) into a `Window` of whole days,
first second to last. Pure rules, no model: what is not recognised is None, and the caller falls
back to the day it was said.

Recognised (English; the common ones in Russian and Chinese):
- dates: `2023-05-08`, `8 May 2023`, `May 8, 2023`, `May 8` (the nearest), `May 2023`, `in 2023`;
  `8 мая 2023`, `в мае`; `2023年5月8日`, `5月8日`, `五月`;
- days: today, tonight, this morning, yesterday, last night, the day before yesterday, tomorrow,
  the day after tomorrow; сегодня, вчера, позавчера, завтра, послезавтра; 今天, 昨天, 前天, 明天,
  后天, 今晚, 昨晚;
- counted: `two days ago`, `a week ago`, `3 months ago`, `in two weeks`, `a couple of years ago`;
  `три дня назад`, `через неделю`; `三天前`, `两个月前`, `一周后` — a day, or the calendar week,
  month or year it falls in;
- calendar units: last/this/next week, weekend, month, year; на прошлой неделе, в прошлом месяце,
  в прошлом году, в эти выходные; 上周, 下个月, 去年, 这个周末;
- named: last/this/next Monday, May, summer; `in May`, `early June`, `late 2022`; a weekday alone
  (`on Friday`) is the latest one on or before the reference.
Weeks run Monday to Sunday; seasons are the northern ones (summer: June to August).

Total at the calendar's ends (issue 31): a reference anywhere in years 1–9999 (an old memory can
hold a turn dated 9999-12-31) never makes a time word raise. Days are moved by `add_days` and
times by `shifted`, both held at the ends; a phrase whose time falls outside the calendar ("next
year" in 9999, "5000 years ago") names no window (None), as an unrecognised one does.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass

from tideline.clock._format import to_text

Days = tuple[dt.date, dt.date]
EARLIEST = dt.datetime(1, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC)


def add_days(day: dt.date, days: int) -> dt.date:
    """`day` moved by `days`, held at the calendar's ends (years 1 and 9999)."""
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        return dt.date.max if days > 0 else dt.date.min


def shifted(moment: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    """`moment` moved by `delta`, held between `EARLIEST` and `LATEST`."""
    try:
        return max(EARLIEST, min(LATEST, moment + delta))
    except OverflowError:
        return LATEST if delta > dt.timedelta(0) else EARLIEST


@dataclass(frozen=True)
class Window:
    """A stretch of valid time, its first and last second, and the words that named it."""

    start: dt.datetime
    end: dt.datetime
    phrase: str

    @property
    def since(self) -> str:
        return to_text(self.start)

    @property
    def until(self) -> str:
        return to_text(self.end)

    def contains(self, stamp: str) -> bool:
        """Whether a stored time falls inside (the stored form sorts as text)."""
        return self.since <= stamp <= self.until

    @classmethod
    def day_of(cls, moment: dt.datetime) -> Window:
        """The whole UTC day of `moment`."""
        day = moment.astimezone(dt.UTC).date() if moment.tzinfo else moment.date()
        return _window((day, day), "")

    def widened(self, days: int) -> Window:
        """The same window with `days` of slack on each side (a thing is often told a few days
        after it happened)."""
        slack = dt.timedelta(days=days)
        return Window(shifted(self.start, -slack), shifted(self.end, slack), self.phrase)


def _window(days: Days, phrase: str) -> Window:
    first, last = days
    start = dt.datetime.combine(first, dt.time.min, dt.UTC)
    end = dt.datetime.combine(last, dt.time(23, 59, 59), dt.UTC)
    return Window(start, end, phrase.strip())


# -- calendar arithmetic ---------------------------------------------------------------------
def _month(year: int, month: int) -> Days:
    return dt.date(year, month, 1), dt.date(year, month, calendar.monthrange(year, month)[1])


def _shift_month(day: dt.date, months: int) -> tuple[int, int]:
    n = day.year * 12 + day.month - 1 + months
    return n // 12, n % 12 + 1


def _week(day: dt.date) -> Days:
    monday = add_days(day, -day.weekday())
    return monday, add_days(monday, 6)


def _weekend(day: dt.date) -> Days:
    saturday = add_days(_week(day)[0], 5)
    return saturday, add_days(saturday, 1)


def _year(year: int) -> Days:
    return dt.date(year, 1, 1), dt.date(year, 12, 31)


def _unit(day: dt.date, unit: str, offset: int) -> Days:
    """The calendar `unit` (day, week, weekend, month, year) `offset` units from `day`'s."""
    if unit == "day":
        d = add_days(day, offset)
        return d, d
    if unit == "week":
        return _week(add_days(day, 7 * offset))
    if unit == "weekend":
        return _weekend(add_days(day, 7 * offset))
    if unit == "month":
        return _month(*_shift_month(day, offset))
    return _year(day.year + offset)


def _counted(day: dt.date, unit: str, n: int) -> Days:
    """`n` units from `day` (negative: ago): the day itself, or the week, month or year of it."""
    if unit == "day":
        return _unit(day, "day", n)
    if unit == "week":
        return _week(add_days(day, 7 * n))
    if unit == "month":
        return _month(*_shift_month(day, n))
    return _year(day.year + n)


SEASONS = {
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "winter": (12, 2),
}


def _season(year: int, name: str) -> Days:
    first, last = SEASONS[name]
    if first > last:  # winter: December into the next year's February
        return dt.date(year, 12, 1), _month(year + 1, last)[1]
    return dt.date(year, first, 1), _month(year, last)[1]


def _season_of(day: dt.date, name: str, offset: int) -> Days:
    """This (0), last (-1) or next (1) season `name` relative to `day`."""
    first, last = SEASONS[name]
    year = day.year - (1 if first > last and day.month <= last else 0)
    this = _season(year, name)
    if offset < 0:
        return this if this[1] < day else _season(year - 1, name)
    if offset > 0:
        return this if this[0] > day else _season(year + 1, name)
    return this


def _named_month(day: dt.date, month: int, offset: int | None) -> Days:
    """`month` last (-1), this (0), next (1), or said plainly (None: in the reference's year)."""
    if offset is None or offset == 0:
        return _month(day.year, month)
    if offset < 0:
        return _month(day.year if month < day.month else day.year - 1, month)
    return _month(day.year if month > day.month else day.year + 1, month)


def _weekday(day: dt.date, weekday: int, offset: int | None) -> Days:
    """Last (-1), this (0) or next (1) `weekday`; said alone (None): the latest on or before."""
    if offset == 0:
        d = add_days(_week(day)[0], weekday)
    elif offset is not None and offset > 0:
        d = add_days(day, (weekday - day.weekday() - 1) % 7 + 1)
    else:
        back = (day.weekday() - weekday) % 7
        d = add_days(day, -(back or (7 if offset is not None else 0)))
    return d, d


def _nearest(day: dt.date, month: int, dom: int) -> dt.date:
    """A day and month without a year: the one nearest to `day`."""
    options = []
    for y in (day.year - 1, day.year, day.year + 1):
        try:
            options.append(dt.date(y, month, dom))
        except ValueError:
            continue
    return min(options, key=lambda d: abs(d - day))


def _part(days: Days, part: str) -> Days:
    """The early, middle or late third of a stretch of days."""
    first, last = days
    span = (last - first).days + 1
    third = max(1, span // 3)
    if part == "early":
        return first, add_days(first, third - 1)
    if part == "late":
        return add_days(last, -(third - 1)), last
    return add_days(first, third), add_days(last, -third)


# -- vocabularies ----------------------------------------------------------------------------
MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS |= {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
MONTHS["sept"] = 9
WEEKDAYS = {d.lower(): i for i, d in enumerate(calendar.day_name)}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2,
    "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
OFFSETS = {
    "last": -1,
    "previous": -1,
    "past": -1,
    "this": 0,
    "this past": -1,
    "next": 1,
    "coming": 1,
}
RU_MONTHS = {
    stem: n
    for n, stem in enumerate(
        ("январ", "феврал", "март", "апрел", "ма", "июн", "июл", "август", "сентябр", "октябр",
         "ноябр", "декабр"),
        1,
    )
}  # fmt: skip
RU_NUMBERS = {
    "один": 1, "одну": 1, "одна": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5,
    "шесть": 6, "семь": 7, "восемь": 8, "девять": 9, "десять": 10, "пару": 2, "несколько": 3,
}  # fmt: skip
ZH_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
ZH_MONTHS = {
    "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
    "十一": 11, "十二": 12,
}  # fmt: skip


def _zh_number(text: str) -> int:
    """`3`, `三`, `十二`, `二十`: the small numbers people count days and months with."""
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + ZH_DIGITS.get(ones, 0)
    return ZH_DIGITS.get(text, 1)


def _number(text: str) -> int:
    text = " ".join(text.split())
    if text.isdigit():
        return int(text)
    return NUMBERS.get(text, RU_NUMBERS.get(text, 1))


def _ru_unit(word: str) -> str:
    for stem, unit in (("дн", "day"), ("ден", "day"), ("сут", "day"), ("недел", "week"),
                       ("месяц", "month"), ("год", "year"), ("лет", "year")):  # fmt: skip
        if word.startswith(stem):
            return unit
    return "day"


def _ru_month(word: str) -> int | None:
    for stem, n in sorted(RU_MONTHS.items(), key=lambda kv: -len(kv[0])):
        if word.startswith(stem) and (stem != "ма" or word in ("мая", "мае", "май")):
            return n
    return None


_ZH_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month",
             "个月": "month", "年": "year"}  # fmt: skip

# -- the patterns, each with how it resolves ---------------------------------------------------
Rule = tuple[re.Pattern[str], Callable[[re.Match[str], dt.date], Days | None]]
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY = "|".join(WEEKDAYS)
_NUM = r"\d+|a couple of|couple of|a few|few|several|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_OFFSET = r"this past|last|previous|past|this|next|coming"
_SEASON = "|".join(SEASONS)
_RU_NUM = r"\d+|" + "|".join(RU_NUMBERS)
_ZH_NUM = r"\d+|[一二两三四五六七八九十]+"
_W = r"(?<![\w])"  # a word starts here (also before Cyrillic, unlike \b with digits)
_E = r"(?![\w])"


def _date(y: int, m: int, d: int) -> Days | None:
    try:
        day = dt.date(y, m, d)
    except ValueError:
        return None
    return day, day


def _iso(m: re.Match[str], ref: dt.date) -> Days | None:
    return _date(int(m["y"]), int(m["m"]), int(m["d"]))


def _dmy(m: re.Match[str], ref: dt.date) -> Days | None:
    return _date(int(m["y"]), MONTHS[m["mon"]], int(m["d"]))


def _dm(m: re.Match[str], ref: dt.date) -> Days | None:
    day = int(m["d"])
    if not 1 <= day <= 31:
        return None
    d = _nearest(ref, MONTHS[m["mon"]], day)
    return d, d


def _month_year(m: re.Match[str], ref: dt.date) -> Days:
    days = _month(int(m["y"]), MONTHS[m["mon"]])
    return _part(days, m["part"]) if m["part"] else days


def _year_only(m: re.Match[str], ref: dt.date) -> Days:
    days = _year(int(m["y"]))
    return _part(days, m["part"]) if m["part"] else days


def _day_word(m: re.Match[str], ref: dt.date) -> Days:
    word = " ".join(m[0].split())
    back = {"yesterday": -1, "last night": -1, "the day before yesterday": -2, "tomorrow": 1,
            "the day after tomorrow": 2, "вчера": -1, "позавчера": -2, "завтра": 1,
            "послезавтра": 2, "昨天": -1, "昨晚": -1, "前天": -2, "明天": 1, "后天": 2}  # fmt: skip
    return _unit(ref, "day", back.get(word, 0))


def _relative_unit(m: re.Match[str], ref: dt.date) -> Days:
    days = _unit(ref, m["unit"], OFFSETS[" ".join(m["off"].split())])
    return _part(days, m["part"]) if m["part"] else days


def _earlier_this(m: re.Match[str], ref: dt.date) -> Days:
    first = _unit(ref, m["unit"], 0)[0]
    return (first, ref) if m["when"] == "earlier" else (ref, _unit(ref, m["unit"], 0)[1])


def _named_weekday(m: re.Match[str], ref: dt.date) -> Days:
    off = OFFSETS.get(" ".join((m["off"] or "").split())) if m["off"] else None
    return _weekday(ref, WEEKDAYS[m["day"]], off)


def _month_named(m: re.Match[str], ref: dt.date) -> Days:
    off = OFFSETS.get(" ".join((m["off"] or "").split())) if m["off"] else None
    days = _named_month(ref, MONTHS[m["mon"]], off)
    return _part(days, m["part"]) if m["part"] else days


def _season_named(m: re.Match[str], ref: dt.date) -> Days:
    off = OFFSETS[" ".join(m["off"].split())] if m["off"] else 0
    return _season_of(ref, m["season"], off)


def _ru_date(m: re.Match[str], ref: dt.date) -> Days | None:
    month = _ru_month(m["mon"])
    if month is None:
        return None
    if m["y"]:
        return _date(int(m["y"]), month, int(m["d"]))
    d = _nearest(ref, month, int(m["d"]))
    return d, d


def _ru_in_month(m: re.Match[str], ref: dt.date) -> Days | None:
    month = _ru_month(m["mon"])
    if month is None:
        return None
    off = {"прошлом": -1, "этом": 0, "следующем": 1}.get(m["off"] or "")
    return _named_month(ref, month, off)


def _ru_relative(m: re.Match[str], ref: dt.date) -> Days:
    word = m["off"]
    off = -1 if word.startswith("прошл") else 1 if word.startswith("следующ") else 0
    unit = m["unit"]
    key = (
        "week"
        if unit.startswith("недел")
        else "month"
        if unit.startswith("месяц")
        else ("weekend" if unit.startswith("выходн") else "year")
    )
    return _unit(ref, key, off)


def _zh_date(m: re.Match[str], ref: dt.date) -> Days | None:
    month, day = _zh_number(m["m"]), _zh_number(m["d"]) if m["d"] else None
    if not 1 <= month <= 12:
        return None
    if m["y"] and day:
        return _date(int(m["y"]), month, day)
    if m["y"]:
        return _month(int(m["y"]), month)
    if day:
        if not 1 <= day <= 31:
            return None
        d = _nearest(ref, month, day)
        return d, d
    return _month(ref.year, month)


def _zh_ago(m: re.Match[str], ref: dt.date) -> Days:
    sign = -1 if m["dir"] in ("前", "以前", "之前") else 1
    return _counted(ref, _ZH_UNITS[m["unit"]], sign * _zh_number(m["n"]))


def _zh_relative(m: re.Match[str], ref: dt.date) -> Days:
    word = m[0]
    if word in ("去年", "今年", "明年", "前年"):
        return _year(ref.year + {"前年": -2, "去年": -1, "今年": 0, "明年": 1}[word])
    off = -1 if word.startswith("上") else 1 if word.startswith("下") else 0
    unit = "weekend" if "周末" in word else "month" if "月" in word else "week"
    return _unit(ref, unit, off)


def _english_count(m: re.Match[str], ref: dt.date) -> Days | None:
    if m["ago"]:
        return _counted(ref, m["unit"], -_number(m["n"]))
    if m["fut"] or m[0].endswith(("from now", "time")):
        return _counted(ref, m["unit"], _number(m["n"]))
    return None  # "two weeks" alone says how long, not when


def _russian_count(m: re.Match[str], ref: dt.date) -> Days | None:
    n = _number(m["n"]) if m["n"] else 1
    if m["fut"]:
        return _counted(ref, _ru_unit(m["unit"]), n)
    if m["ago"]:
        return _counted(ref, _ru_unit(m["unit"]), -n)
    return None


RULES: tuple[Rule, ...] = (
    (re.compile(r"(?P<y>\d{4})-(?P<m>\d\d)-(?P<d>\d\d)"), _iso),
    (
        re.compile(
            rf"{_W}(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH})\.?,?\s+(?P<y>\d{{4}}){_E}"
        ),
        _dmy,
    ),
    (
        re.compile(
            rf"{_W}(?P<mon>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}}){_E}"
        ),
        _dmy,
    ),
    (
        re.compile(
            rf"{_W}(?:(?P<part>early|mid|late)[\s-]+)?(?P<mon>{_MONTH})\.?,?\s+(?:of\s+)?(?P<y>\d{{4}}){_E}"
        ),
        _month_year,
    ),
    (re.compile(rf"{_W}(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH}){_E}"), _dm),
    (re.compile(rf"{_W}(?P<mon>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?{_E}"), _dm),
    (
        re.compile(
            rf"{_W}(?:in|during|since|of|by)\s+(?:(?P<part>early|mid|late)\s+)?(?P<y>(?:19|20)\d\d){_E}"
        ),
        _year_only,
    ),
    (
        re.compile(
            r"(?<![\w])(?:the day before yesterday|the day after tomorrow|yesterday|tomorrow|today|tonight|last night|this (?:morning|afternoon|evening))(?![\w])"
        ),
        _day_word,
    ),
    (
        re.compile(
            rf"{_W}(?:(?P<fut>in)\s+)?(?P<n>{_NUM})\s+(?P<unit>day|week|month|year)s?(?:'s|s')?(?:\s+(?:time|from now))?(?:\s+(?P<ago>ago))?{_E}"
        ),
        _english_count,
    ),
    (
        re.compile(rf"{_W}(?P<when>earlier|later)\s+this\s+(?P<unit>week|month|year){_E}"),
        _earlier_this,
    ),
    (
        re.compile(
            rf"{_W}(?:(?P<part>early|mid|late)\s+)?(?P<off>{_OFFSET})\s+(?P<unit>week|weekend|month|year){_E}"
        ),
        _relative_unit,
    ),
    (
        re.compile(rf"{_W}(?:(?P<off>{_OFFSET})\s+|on\s+)?(?P<day>{_WEEKDAY})(?!s){_E}"),
        _named_weekday,
    ),
    (
        re.compile(
            rf"{_W}(?:(?P<off>{_OFFSET})\s+|in\s+|(?P<part>early|mid|late)\s+)(?P<mon>{_MONTH}){_E}"
        ),
        _month_named,
    ),
    (
        re.compile(rf"{_W}(?:(?P<off>{_OFFSET})\s+|in\s+the\s+|in\s+)(?P<season>{_SEASON}){_E}"),
        _season_named,
    ),
    # Russian
    (
        re.compile(
            rf"{_W}(?P<d>\d{{1,2}})\s+(?P<mon>[а-я]+)(?:\s+(?P<y>\d{{4}})(?:\s*г(?:ода|\.)?)?)?{_E}"
        ),
        _ru_date,
    ),
    (re.compile(r"(?<![\w])(?:позавчера|послезавтра|вчера|завтра|сегодня)(?![\w])"), _day_word),
    (
        re.compile(
            rf"{_W}(?:(?P<fut>через)\s+)?(?:(?P<n>{_RU_NUM})\s+)?(?P<unit>дн(?:я|ей)|день|сут(?:ки|ок)|недел[юиь]|месяц(?:а|ев)?|год(?:а)?|лет)(?:\s+(?P<ago>назад))?{_E}"
        ),
        _russian_count,
    ),
    (
        re.compile(
            r"(?<![\w])(?:на|в)\s+(?P<off>прошл\w*|эт\w*|следующ\w*)\s+(?P<unit>недел\w*|месяц\w*|год\w*|выходн\w*)(?![\w])"
        ),
        _ru_relative,
    ),
    (
        re.compile(r"(?<![\w])в\s+(?:(?P<off>прошлом|этом|следующем)\s+)?(?P<mon>[а-я]+е)(?![\w])"),
        _ru_in_month,
    ),
    # Chinese
    (
        re.compile(
            r"(?:(?P<y>\d{4})年)?(?P<m>\d{1,2}|十[一二]?|[一二三四五六七八九])月(?:(?P<d>\d{1,2}|[一二三四五六七八九十]+)[日号])?"
        ),
        _zh_date,
    ),
    (re.compile(r"前天|昨天|昨晚|今天|今晚|明天|后天"), _day_word),
    (
        re.compile(
            rf"(?P<n>{_ZH_NUM})\s*(?P<unit>个月|天|日|周|个?星期|礼拜|年)(?P<dir>以前|之前|前|以后|之后|后)"
        ),
        _zh_ago,
    ),
    (
        re.compile(
            r"上个?周末|这个?周末|下个?周末|上个?星期|上周|这个?星期|这周|本周|下个?星期|下周|上个月|这个月|本月|下个月|前年|去年|今年|明年"
        ),
        _zh_relative,
    ),
)


def when(text: str, reference: dt.datetime | dt.date) -> Window | None:
    """The first time expression in `text`, resolved against `reference` (naive: UTC), or None.
    Of expressions that overlap the first one the longest wins ("in December 2022" is the
    month of that year, not this year's December)."""
    ref = reference.date() if isinstance(reference, dt.datetime) else reference
    if isinstance(reference, dt.datetime) and reference.tzinfo is not None:
        ref = reference.astimezone(dt.UTC).date()
    lowered = text.casefold()
    found: list[tuple[int, int, Days]] = []
    for pattern, rule in RULES:
        for m in pattern.finditer(lowered):
            try:
                days = rule(m, ref)
            except (OverflowError, ValueError):  # a time past the calendar's ends: none
                days = None
            if days is not None:
                found.append((m.start(), m.end(), days))
                break
    if not found:
        return None
    first = min(found)
    start, end, days = max(
        (f for f in found if f[0] < first[1]), key=lambda f: (f[1] - f[0], -f[0])
    )
    source = text if len(text) == len(lowered) else lowered  # casefold may change lengths
    return _window(days, source[start:end])


# -- "before the trip": a time question anchored to something else ----------------------------
_ANCHOR = re.compile(
    r"(?<![\w])(?P<rel>before|after|since|until|till|prior to|following|до|после|перед|с тех пор как)"
    r"\s+(?P<words>[^?.!,;:]+)"
)
_ZH_ANCHOR = re.compile(r"(?P<words>[\w\u4e00-\u9fff]+?)(?P<rel>之前|以前|之后|以后)")
_RELATIONS = {
    "before": "before", "prior to": "before", "до": "before", "перед": "before", "之前": "before",
    "以前": "before", "after": "after", "following": "after", "после": "after", "之后": "after",
    "以后": "after", "since": "since", "с тех пор как": "since", "until": "until", "till": "until",
}  # fmt: skip


@dataclass(frozen=True)
class Anchor:
    """A time question tied to something else: "before the trip" is `before` + "the trip"."""

    relation: str  # before | after | since | until
    words: str  # what it is tied to, as asked

    def around(self, window: Window) -> Window:
        """The stretch of time this relation makes of the anchor's window."""
        phrase = f"{self.relation} {window.phrase}"
        second = dt.timedelta(seconds=1)
        if self.relation == "before":
            return Window(EARLIEST, shifted(window.start, -second), phrase)
        if self.relation == "after":
            return Window(shifted(window.end, second), LATEST, phrase)
        if self.relation == "since":
            return Window(window.start, LATEST, phrase)
        return Window(EARLIEST, window.end, phrase)


def anchor(text: str) -> Anchor | None:
    """The first "before/after/since/until <something>" in `text` (and the Russian and Chinese
    forms: до, после, 之前, 以后 …), or None."""
    lowered = text.casefold()
    found = _ANCHOR.search(lowered) or _ZH_ANCHOR.search(lowered)
    if found is None:
        return None
    words = " ".join(found["words"].split()).removeprefix("the ").strip()
    return Anchor(_RELATIONS[found["rel"]], words) if words else None
