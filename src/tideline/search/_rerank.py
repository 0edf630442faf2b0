"""Re-ordering a fused list with what the owner knows and the lists do not.

- `lift`: add a second retrieval's scores to the first's — a search restricted to the time a
  question names ("in May 2023"), or the source turns of memories that matched, count on top of
  the plain search. The second scores are rescaled so its best equals `weight` × the first's
  best, whatever fusion made either. Records only the second found join the list.
- `diversify`: at most `cap` hits of one group (a session, a file) before every other group had
  its turn, so a top 10 is not ten near-duplicates of one conversation (multi-hop questions need
  evidence from several).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace

from tideline.search._types import SCORE_PLACES, Hit


def lift(base: Sequence[Hit], extra: Mapping[int, float], weight: float) -> list[Hit]:
    """`base` with each `extra[id]`, scaled to `weight` × base's best at extra's best, added to
    its score (new ids join with that alone); re-ordered by score (then id)."""
    top_extra = max(extra.values(), default=0.0)
    if top_extra <= 0 or weight == 0:
        return list(base)
    top = max((h.score for h in base), default=1.0) or 1.0
    scale = weight * top / top_extra
    out = {h.id: replace(h) for h in base}
    fusion = base[0].fusion if base else None
    for i, score in extra.items():
        out.setdefault(i, Hit(i, fusion=fusion)).score += scale * score
    return sorted(out.values(), key=lambda h: (-round(h.score, SCORE_PLACES), h.id))


def diversify(hits: Sequence[Hit], group: Mapping[int, Hashable], cap: int) -> list[Hit]:
    """The hits with no group holding more than `cap` places ahead of a hit of a group that has
    fewer; order is otherwise kept. cap <= 0: unchanged."""
    if cap <= 0:
        return list(hits)
    seen: dict[Hashable, int] = {}
    first: list[Hit] = []
    later: list[Hit] = []
    for h in hits:
        g = group.get(h.id, h.id)
        seen[g] = seen.get(g, 0) + 1
        (first if seen[g] <= cap else later).append(h)
    return first + later
