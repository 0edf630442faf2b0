"""The prefetch pool: the high-weight narratives the session-start identity block (T2) draws from.

One query of `Narratives.pool`, no embedding, so it costs a few milliseconds at any size. The exact
selection and ordering (`tideline.memory` keeps the SQL):

    WHERE weight >= min_weight [AND kind IN kinds]
    ORDER BY CAST(weight * 10 AS INTEGER) DESC,   -- weight band: 0.9x, then 0.8x, ...
             recurrence DESC,                      -- within a band, recurring themes first
             created_at DESC,                      -- then the most recent
             id DESC                               -- then the newest row (a total order)
    LIMIT limit

Weights are banded to tenths because the four 1–5 dimensions give only a few dozen distinct
weights and anti-inflation rescales them slightly: a 0.84 and a 0.81 memory are equally heavy for
T2, and recurrence and recency are the better tie-breakers between them.
"""

from __future__ import annotations

from collections.abc import Sequence

from tideline.errors import InvalidInput
from tideline.memory import KINDS, Memory, Narrative

__all__ = ["prefetch_pool"]


def prefetch_pool(
    memory: Memory,
    min_weight: float = 0.6,
    limit: int = 50,
    *,
    kinds: Sequence[str] | None = None,
) -> list[Narrative]:
    """Narratives with weight >= `min_weight`, best first (see the module docstring), at most
    `limit`. `kinds` restricts the kinds (e.g. ("narrative", "reflection") to leave dreams out)."""
    if not 0.0 <= float(min_weight) <= 1.0:
        raise InvalidInput(f"min_weight={min_weight}: weights lie in 0–1; pass e.g. 0.6")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInput(f"limit={limit!r}: ask for at least 1 narrative")
    unknown = sorted(set(kinds or ()) - set(KINDS))
    if unknown:
        raise InvalidInput(f"kinds {unknown} are unknown; use some of {list(KINDS)}")
    return memory.narratives.pool(min_weight, limit, kinds)
