"""Which speakers a question names: "What did Caroline research?" names Caroline.

A question about a conversation most often names the person whose words answer it (on
LoCoMo, 97% of the evidence turns of a question naming one speaker are that speaker's), so the
turns of a named speaker are lifted (`Policy.speaker_weight`, the `speaker` mark). A name is
matched whole and case-folded ("caroline's" names Caroline; "Carol" does not); a speaker of
one character names nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache


@lru_cache(maxsize=1024)
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def named(question: str, speakers: Iterable[str]) -> set[str]:
    """The `speakers` that `question` names (as given)."""
    text = " ".join(question.casefold().split())
    out: set[str] = set()
    for speaker in set(speakers):
        name = " ".join(speaker.casefold().split())
        if len(name) > 1 and _pattern(name).search(text):
            out.add(speaker)
    return out
