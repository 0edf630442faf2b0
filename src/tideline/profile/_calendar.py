"""The event calendar: which stretch of the user's time a question asks about. Pure rules.

Events carry a date range in valid time (`_events`). A time question names a window directly
("what did I do last May", "on 8 May 2023": `tideline.clock.when`) or ties it to something that
happened ("before the trip", "since I moved": `tideline.clock.anchor`), which is looked up here
among the events: the one sharing the most content words with the words asked about (a phrase
that is itself a time, "after May 2023", is read as that time).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable

from tideline.clock import Window, anchor, from_text, when
from tideline.profile._records import Event

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff]")
STOP_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "my",
        "our",
        "your",
        "his",
        "her",
        "their",
        "its",
        "this",
        "that",
        "these",
        "those",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "and",
        "or",
        "from",
        "by",
        "i",
        "we",
        "you",
        "he",
        "she",
        "they",
        "it",
        "was",
        "were",
        "is",
        "are",
        "be",
        "been",
        "did",
        "do",
        "does",
        "what",
        "when",
        "where",
        "how",
        "went",
        "go",
        "going",
        "got",
        "had",
        "has",
        "have",
    ]
)


def content_words(text: str) -> set[str]:
    """The words that say what something is about: case-folded, stop words out; CJK text,
    which has no spaces, by its two-character pieces."""
    out: set[str] = set()
    for word in _WORD.findall(text.casefold()):
        if _CJK.search(word):
            out |= {word[i : i + 2] for i in range(max(1, len(word) - 1))}
        elif len(word) > 2 and word not in STOP_WORDS:
            out.add(word)
    return out


def event_window(events: Iterable[Event], words: str) -> Window | None:
    """The date range of the event sharing the most content words with `words`; None when
    no event shares one (the earliest start wins a tie)."""
    wanted = content_words(words)
    best, score = None, 0
    for e in events:
        shared = len(wanted & content_words(f"{e.title} {e.details}"))
        if shared > score:
            best, score = e, shared
    if best is None:
        return None
    return Window(
        from_text(best.valid_from), from_text(best.valid_to or best.valid_from), best.title
    )


def time_window(
    question: str, reference: dt.datetime, events: Callable[[], Iterable[Event]]
) -> Window | None:
    """The window of valid time `question` asks about, read against `reference`; `events` is
    called only for a question tied to an event ("before the trip")."""
    tied = anchor(question)
    if tied is not None:
        found = when(tied.words, reference) or event_window(events(), tied.words)
        if found is not None:
            return tied.around(found)
    return when(question, reference)
