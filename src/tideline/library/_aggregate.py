"""From key hits to chunk hits: a chunk is found through any of its keys (`_keys`).

`retrieve` ranks keys: chunks without item keys, item keys and head keys alike. A chunk must come
back once, so each ranked list (lexical, vector) is collapsed to chunks first, a chunk taking the
rank of its best key there, and the collapsed lists are then fused by the library's policy. A
chunk's eight examples never fill eight places of a list and push the next pages out of the
fusion, and a chunk still gains from being found by both lists through different keys (a query
whose command words hit one example and whose meaning is nearest another).

The key with the best reciprocal-rank score of its own is the chunk's `match`: its line and text say
where in the chunk the answer is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tideline.search import Hit, Policy, fuse

Key = tuple[int, int]  # (source, id)


@dataclass
class Grouped:
    """Chunk hits (ids are chunk ids) in fused order, and each chunk's best key."""

    hits: list[Hit]
    best: dict[Key, Key]


def by_chunk(lists: Sequence[list[Hit]], parent: Mapping[Key, Key], policy: Policy) -> Grouped:
    """Collapse each ranked list of key hits to chunks and fuse them (one list keeps its own
    order and scores); `parent` maps a key to its chunk (a chunk to itself)."""
    # a key's own reciprocal-rank score names the best key of each chunk (its `match`)
    weights = policy.weights if len(lists) == len(policy.weights) else (1.0,) * len(lists)
    score: dict[Key, float] = {}
    for hits, w in zip(lists, weights, strict=True):
        for pos, h in enumerate(hits, 1):
            score[h.key] = score.get(h.key, 0.0) + w / (policy.rrf_k + pos)
    best: dict[Key, Key] = {}
    for key, value in score.items():
        group = parent.get(key, key)
        if group not in best or value > score[best[group]]:
            best[group] = key
    collapsed = [_collapse(hits, parent) for hits in lists]
    if len(collapsed) > 1:
        return Grouped(fuse(collapsed, policy), best)
    return Grouped(collapsed[0] if collapsed else [], best)


def _collapse(ranked: list[Hit], parent: Mapping[Key, Key]) -> list[Hit]:
    """Keep the first (best) key of each chunk, re-keyed to the chunk."""
    seen: set[Key] = set()
    out: list[Hit] = []
    for h in ranked:
        group = parent.get(h.key, h.key)
        if group in seen:
            continue
        seen.add(group)
        out.append(replace(h, id=group[1], source=group[0]))
    return out
