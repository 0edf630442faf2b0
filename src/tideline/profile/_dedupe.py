"""Finding facts that say the same thing (seed step 12). Pure rule, no SQL.

Two live facts are duplicates when subject, category and value are equal after normalising
(NFKC, case-folded, whitespace collapsed, trailing punctuation dropped). The one kept is the most
advanced in the lifecycle, then the best evidenced, then the oldest; the others are merged into it
(their evidence and mentions move over) and closed with `merged_into` — never deleted.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from tideline.profile._records import ACTIVE_STATUSES, Fact

_TRAILING = re.compile(r"[\s.,;:!?。，；：！？、]+$")


def normalise(value: str) -> str:
    text = unicodedata.normalize("NFKC", value).casefold()
    return _TRAILING.sub("", re.sub(r"\s+", " ", text).strip())


def fact_key(fact: Fact) -> tuple[str, str, str]:
    return normalise(fact.subject), normalise(fact.category), normalise(fact.value)


@dataclass(frozen=True)
class Duplicates:
    keep: Fact
    drop: tuple[Fact, ...]


def _rank(fact: Fact) -> tuple[int, int, int, int]:
    return (-ACTIVE_STATUSES.index(fact.status), -fact.evidence_count, -fact.mention_count, fact.id)


def duplicates(facts: list[Fact]) -> list[Duplicates]:
    """Groups of live facts with the same key, each with the one to keep."""
    groups: dict[tuple[str, str, str], list[Fact]] = {}
    for fact in facts:
        if fact.status in ACTIVE_STATUSES:
            groups.setdefault(fact_key(fact), []).append(fact)
    out = []
    for group in groups.values():
        if len(group) > 1:
            keep, *drop = sorted(group, key=_rank)
            out.append(Duplicates(keep, tuple(drop)))
    return sorted(out, key=lambda d: d.keep.id)
