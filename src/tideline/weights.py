"""The narrative weight formula and the recurrence mapping, in one place.

Both the write path (`tideline.memory`, which scores a narrative when it is written) and the script
layer (`tideline.analysis`, which refreshes recurrence and re-weights everything) must agree on
these numbers, so they live in this tiny core module that imports nothing of ours.

    raw    = 0.35·importance + 0.25·emotional + 0.25·recurrence + 0.15·unresolved   (1..5)
    weight = (raw − 1) / 4                                                          (0..1)

Recurrence (1–5) is how many OTHER narratives share at least one tag with this one, banded:

    others:      0   1   2–3   4–7   ≥8
    recurrence:  1   2   3     4     5

The bands double in width so that each step means "roughly twice as common"; 8 or more is
"a recurring theme" and saturates.
"""

from __future__ import annotations

from numbers import Integral

__all__ = [
    "DIMENSION_MAX",
    "DIMENSION_MIN",
    "RECURRENCE_BANDS",
    "RECURRENCE_SATURATION",
    "WEIGHT_COEFFICIENTS",
    "compute_weight",
    "raw_weight",
    "recurrence_from_count",
]

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


def _check_dimension(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name}={value!r}: dimensions are integers 1–5; pass an int")
    if not DIMENSION_MIN <= value <= DIMENSION_MAX:
        raise ValueError(f"{name}={value}: dimensions are scored 1–5; clamp it into that range")


def raw_weight(importance: int, emotional: int, recurrence: int, unresolved: int) -> float:
    """The weighted sum of the four 1–5 dimensions (1.0–5.0)."""
    dims = {
        "importance": importance,
        "emotional": emotional,
        "recurrence": recurrence,
        "unresolved": unresolved,
    }
    for name, value in dims.items():
        _check_dimension(name, value)
    return sum(WEIGHT_COEFFICIENTS[name] * value for name, value in dims.items())


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
