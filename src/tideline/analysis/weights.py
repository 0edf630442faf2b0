"""Recurrence refresh and anti-inflation over many narratives at once (pure functions).

The per-narrative formula lives in `tideline.weights`; this module applies it to a whole corpus.

Order of a refresh run: `refresh_recurrence` → `recompute_weights` → `deflate_recent`. Recomputing a
weight from its dimensions undoes an earlier deflation, which is why deflation always runs last.

Anti-inflation rule (exact and idempotent): take the `window` most recent narratives (by
`created_at`, ties broken by id, newest first). If their mean weight exceeds `ceiling` by more than
`tolerance`, multiply each of their weights by `ceiling / mean` (rounded to 6 places); older
narratives are untouched. Afterwards the recent mean is `ceiling` (within rounding), so a second run
finds nothing to do and changes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from tideline.weights import RECURRENCE_SATURATION, compute_weight, recurrence_from_count

__all__ = [
    "DEFAULT_CEILING",
    "DEFAULT_WINDOW",
    "WeightedNarrative",
    "count_tag_sharers",
    "deflate_recent",
    "normalise_tag",
    "recompute_weights",
    "refresh_recurrence",
]

DEFAULT_WINDOW = 50
DEFAULT_CEILING = 0.7
#: Rounding to 6 places can leave the mean a hair above the ceiling; this absorbs it.
_TOLERANCE = 1e-5


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


def normalise_tag(tag: str) -> str:
    """Tags match case-insensitively and ignore surrounding whitespace ("Debug " == "debug")."""
    return " ".join(tag.split()).casefold()


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
        new = round(w * factor, 6)
        if new != w:
            changed[nid] = new
    return changed
