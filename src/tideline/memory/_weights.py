"""The narrative rules: the weight formula, recurrence, anti-inflation and tag normalisation.

The write path (`Narratives.insert`) and the script layer (`tideline.analysis`, which refreshes
recurrence and re-weights everything) must agree on these numbers, so they live here, in `memory`,
and analysis imports them (never the reverse).

    raw    = 0.35·importance + 0.25·emotional + 0.25·recurrence + 0.15·unresolved   (1..5)
    weight = (raw − 1) / 4                                                          (0..1)

Recurrence (1–5) is how many OTHER narratives share at least one tag with this one, banded:

    others:      0   1   2–3   4–7   ≥8
    recurrence:  1   2   3     4     5

The bands double in width so that each step means "roughly twice as common"; 8 or more is
"a recurring theme" and saturates.

Order of a refresh run: `refresh_recurrence` → `recompute_weights` → `deflate_recent`. Recomputing a
weight from its dimensions undoes an earlier deflation, which is why deflation always runs last.

Anti-inflation rule (exact and idempotent): take the `window` (50) most recent narratives (by
`created_at`, ties broken by id, newest first). If their mean weight exceeds `ceiling` (0.7) by more
than a rounding tolerance, multiply each of their weights by `ceiling / mean` (rounded to 6 places);
older narratives are untouched. Afterwards the recent mean is `ceiling` (within rounding), so a
second run finds nothing to do and changes nothing.

Tags match case-insensitively with runs of whitespace collapsed: "Machine  Learning",
" machine learning" and "MACHINE LEARNING" are one tag, on write and in every filter.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from numbers import Integral

from tideline.errors import InvalidInput

DIMENSION_MIN = 1
DIMENSION_MAX = 5

#: Coefficients of the four dimensions; they sum to 1, so raw stays within 1..5.
WEIGHT_COEFFICIENTS: dict[str, float] = {
    "importance": 0.35,
    "emotional": 0.25,
    "recurrence": 0.25,
    "unresolved": 0.15,
}

#: (smallest count of other narratives sharing a tag, recurrence score), ascending.
RECURRENCE_BANDS: tuple[tuple[int, int], ...] = ((0, 1), (1, 2), (2, 3), (4, 4), (8, 5))

#: Counting sharers past this number cannot change the score (used to stop counting early).
RECURRENCE_SATURATION = RECURRENCE_BANDS[-1][0]


DEFAULT_WINDOW = 50
DEFAULT_CEILING = 0.7
#: Rounding to 6 places can leave the mean a hair above the ceiling; this absorbs it.
_TOLERANCE = 1e-5


def check_dimension(name: str, value: object) -> int:
    """The one check of a 1–5 dimension, for writes and for the formula alike."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidInput(f"{name}={value!r} must be an integer from 1 to 5")
    number = int(value)
    if not DIMENSION_MIN <= number <= DIMENSION_MAX:
        raise InvalidInput(f"{name}={value} is out of range; weights are integers from 1 to 5")
    return number


def normalise_tag(tag: str) -> str:
    """The one tag rule, for writes and filters: case-folded, whitespace runs collapsed."""
    return " ".join(tag.split()).casefold()


def raw_weight(importance: int, emotional: int, recurrence: int, unresolved: int) -> float:
    """The weighted sum of the four 1–5 dimensions (1.0–5.0)."""
    dims = {
        "importance": importance,
        "emotional": emotional,
        "recurrence": recurrence,
        "unresolved": unresolved,
    }
    checked = {name: check_dimension(name, value) for name, value in dims.items()}
    return sum(WEIGHT_COEFFICIENTS[name] * value for name, value in checked.items())


def compute_weight(importance: int, emotional: int, recurrence: int, unresolved: int) -> float:
    """The normalised weight (0–1): (raw − 1) / 4, rounded to 6 places to keep it stable."""
    raw = raw_weight(importance, emotional, recurrence, unresolved)
    return round(min(1.0, max(0.0, (raw - 1.0) / 4.0)), 6)


def recurrence_from_count(others: int) -> int:
    """Map the number of OTHER narratives sharing a tag onto the 1–5 recurrence score."""
    if isinstance(others, bool) or not isinstance(others, Integral) or others < 0:
        raise ValueError(f"others={others!r}: a count of narratives must be an int >= 0")
    score = RECURRENCE_BANDS[0][1]
    for threshold, band_score in RECURRENCE_BANDS:
        if others >= threshold:
            score = band_score
    return int(score)


@dataclass(frozen=True, slots=True)
class WeightedNarrative:
    """The columns the weight computations need from one narrative."""

    id: Hashable
    created_at: datetime | float
    importance: int
    emotional: int
    recurrence: int
    unresolved: int
    weight: float


def count_tag_sharers(
    tags_by_id: Mapping[Hashable, Iterable[str]], cap: int | None = None
) -> dict[Hashable, int]:
    """For each narrative, how many OTHER narratives share at least one tag with it.

    With `cap`, counting stops at `cap` (the result is min(true count, cap)). That keeps a corpus
    where everything shares one tag linear instead of quadratic.
    """
    tags: dict[Hashable, frozenset[str]] = {}
    postings: dict[str, list[Hashable]] = defaultdict(list)
    for nid, raw_tags in tags_by_id.items():
        if isinstance(raw_tags, str):
            raise TypeError(
                f"tags of narrative {nid!r} are one string ({raw_tags!r}); pass a list of tags "
                "(parse the stored JSON first)"
            )
        norm = frozenset(t for t in (normalise_tag(x) for x in raw_tags) if t)
        tags[nid] = norm
        for tag in norm:
            postings[tag].append(nid)

    counts: dict[Hashable, int] = {}
    for nid, own in tags.items():
        if not own:
            counts[nid] = 0
            continue
        # Largest postings first: one big tag often settles a capped count at once.
        ordered = sorted(own, key=lambda t: -len(postings[t]))
        largest = len(postings[ordered[0]]) - 1
        if cap is not None and largest >= cap:
            counts[nid] = cap
            continue
        if len(ordered) == 1:
            counts[nid] = largest
            continue
        others: set[Hashable] = set()
        for tag in ordered:
            others.update(postings[tag])
            if cap is not None and len(others) - 1 >= cap:
                break
        others.discard(nid)
        counts[nid] = len(others) if cap is None else min(cap, len(others))
    return counts


def refresh_recurrence(tags_by_id: Mapping[Hashable, Iterable[str]]) -> dict[Hashable, int]:
    """The current recurrence score (1–5) of every narrative from today's tag frequencies."""
    counts = count_tag_sharers(tags_by_id, cap=RECURRENCE_SATURATION)
    return {nid: recurrence_from_count(n) for nid, n in counts.items()}


def recompute_weights(
    narratives: Iterable[WeightedNarrative],
    recurrence: Mapping[Hashable, int] | None = None,
) -> dict[Hashable, float]:
    """Weight of each narrative from its dimensions, with refreshed recurrence where given."""
    out: dict[Hashable, float] = {}
    for n in narratives:
        rec = n.recurrence if recurrence is None else recurrence.get(n.id, n.recurrence)
        out[n.id] = compute_weight(n.importance, n.emotional, rec, n.unresolved)
    return out


def _recency_key(n: WeightedNarrative) -> tuple[float, str]:
    stamp = n.created_at.timestamp() if isinstance(n.created_at, datetime) else n.created_at
    return (float(stamp), str(n.id))


def deflate_recent(
    narratives: Sequence[WeightedNarrative],
    *,
    window: int = DEFAULT_WINDOW,
    ceiling: float = DEFAULT_CEILING,
    weights: Mapping[Hashable, float] | None = None,
) -> dict[Hashable, float]:
    """New weights for the recent narratives when their mean exceeds `ceiling` (see module doc).

    Returns only the weights that change (empty when no rescale is needed). `weights` overrides
    each narrative's stored weight, e.g. with the output of `recompute_weights`.
    """
    if window < 1:
        raise ValueError(f"window={window}: the anti-inflation window must be >= 1 narratives")
    if not 0.0 < ceiling <= 1.0:
        raise ValueError(f"ceiling={ceiling}: the anti-inflation ceiling must be in (0, 1]")
    recent = sorted(narratives, key=_recency_key, reverse=True)[:window]
    if not recent:
        return {}
    current = {n.id: (n.weight if weights is None else weights.get(n.id, n.weight)) for n in recent}
    mean = sum(current.values()) / len(current)
    if mean <= ceiling + _TOLERANCE:
        return {}
    factor = ceiling / mean
    changed: dict[Hashable, float] = {}
    for nid, w in current.items():
        new = math.floor(w * factor * 1e6) / 1e6  # 6 digits, never rounded up past `w`
        if new != w:
            changed[nid] = new
    return changed
