"""Topic clusters: every keyword that survives a document-frequency filter is a topic.

A keyword found in more than `max_df` (a share, default 20%) of the narratives is generic and
dropped; one found in fewer than `min_df` narratives (default 3) is noise and dropped. Both count
narratives, not occurrences, because a topic is only useful if it groups several memories.
The seed's numbers assume a few hundred memories: below `min_df / max_df` (15) narratives no
word could pass both, so a small memory's rule is scaled (`topic_bounds`): a word in at least 2
and at most half of the narratives (2 of 3 or 4; fewer than 3 narratives have no topic). The
members of a topic are the narratives that contain its keyword, so one narrative belongs to as many
topics as it has surviving keywords. This is the IDF half of TF-IDF: deterministic and free.

Optional Jaccard merging (off by default: on a few hundred memories it cascades into one
mega-cluster) joins topics whose member sets overlap by at least `merge_threshold`, transitively
(union-find).

Results are sorted by member count (descending), then label, then key, so the same input always
gives the same output.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from tideline.analysis.keywords import KeywordExtractor

__all__ = ["TopicCluster", "build_topics", "merge_topics", "topic_bounds"]


@dataclass(frozen=True, slots=True)
class TopicCluster:
    """One topic: a keyword (or, after merging, several) and the narratives containing it.

    `keyword` is the comparison key (stem or Chinese word) of the most common member keyword,
    `label` the display form, `keywords` every merged key (just `keyword` when unmerged), and
    `df` the number of member narratives.
    """

    keyword: str
    label: str
    member_ids: tuple[Hashable, ...]
    df: int
    keywords: tuple[str, ...] = ()


def _sort_ids(ids: Iterable[Hashable]) -> tuple[Hashable, ...]:
    items = list(ids)
    try:
        return tuple(sorted(items))  # type: ignore[type-var]
    except TypeError:  # mixed id types: fall back to a stable textual order
        return tuple(sorted(items, key=lambda x: (type(x).__name__, str(x))))


def _sort_topics(topics: Iterable[TopicCluster]) -> list[TopicCluster]:
    return sorted(topics, key=lambda t: (-t.df, t.label, t.keyword))


def _choose_label(surfaces: Counter[str]) -> str:
    """Most common surface form; ties go to the shorter, then the alphabetically first."""
    return min(surfaces.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0]


def topic_bounds(n_docs: int, min_df: int = 3, max_df: float = 0.2) -> tuple[int, int]:
    """The fewest and most narratives a topic's keyword may be in, for `n_docs` narratives
    (empty when fewest > most: no topic can exist; see the module docstring)."""
    ceiling = int(max_df * n_docs + 1e-9)
    if ceiling >= min_df:
        return min_df, ceiling
    return min(2, min_df), max(2, n_docs // 2) if n_docs >= 3 else 0


def build_topics(
    documents: Iterable[tuple[Hashable, str]],
    *,
    max_df: float = 0.2,
    min_df: int = 3,
    merge: bool = False,
    merge_threshold: float = 0.5,
    extractor: KeywordExtractor | None = None,
) -> list[TopicCluster]:
    """Topic clusters of `(narrative_id, text)` pairs (see the module docstring for the rules)."""
    if not 0.0 < max_df <= 1.0:
        raise ValueError(f"max_df={max_df}: the generic-word cut-off is a share in (0, 1]")
    if min_df < 1:
        raise ValueError(f"min_df={min_df}: the noise cut-off counts narratives and must be >= 1")
    extractor = extractor or KeywordExtractor()

    postings: dict[str, list[Hashable]] = defaultdict(list)
    surfaces: dict[str, Counter[str]] = defaultdict(Counter)
    seen_ids: set[Hashable] = set()
    for nid, text in documents:
        if nid in seen_ids:
            raise ValueError(f"narrative id {nid!r} appears twice; pass each narrative once")
        seen_ids.add(nid)
        found: set[str] = set()
        for kw in extractor.extract(text or ""):
            surfaces[kw.key][kw.surface] += 1
            if kw.key not in found:
                found.add(kw.key)
                postings[kw.key].append(nid)

    fewest, most = topic_bounds(len(seen_ids), min_df, max_df)
    topics = [
        TopicCluster(
            keyword=key,
            label=_choose_label(surfaces[key]),
            member_ids=_sort_ids(members),
            df=len(members),
            keywords=(key,),
        )
        for key, members in postings.items()
        if fewest <= len(members) <= most
    ]
    topics = _sort_topics(topics)
    if merge:
        topics = merge_topics(topics, threshold=merge_threshold)
    return topics


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def merge_topics(topics: list[TopicCluster], *, threshold: float = 0.5) -> list[TopicCluster]:
    """Join topics whose member sets have Jaccard similarity >= `threshold`, transitively.

    Overlaps come from one sparse product (topics × narratives), so only pairs that share a
    narrative are ever looked at. A merged topic is named after its largest member topic; its
    label joins the labels of its three largest member topics with " / ".
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"merge_threshold={threshold}: Jaccard thresholds lie in (0, 1]")
    if len(topics) < 2:
        return list(topics)
    from scipy import sparse

    doc_index: dict[Hashable, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for t_i, topic in enumerate(topics):
        for nid in topic.member_ids:
            rows.append(t_i)
            cols.append(doc_index.setdefault(nid, len(doc_index)))
    matrix = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(len(topics), len(doc_index))
    )
    overlap = sparse.triu(matrix @ matrix.T, k=1).tocoo()
    sizes = np.array([t.df for t in topics], dtype=np.float64)
    jaccard = overlap.data / (sizes[overlap.row] + sizes[overlap.col] - overlap.data)

    parent = list(range(len(topics)))
    for a, b in zip(
        overlap.row[jaccard >= threshold].tolist(),
        overlap.col[jaccard >= threshold].tolist(),
        strict=True,
    ):
        ra, rb = _find(parent, a), _find(parent, b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(topics)):
        groups[_find(parent, i)].append(i)
    merged: list[TopicCluster] = []
    for indices in groups.values():
        if len(indices) == 1:
            merged.append(topics[indices[0]])
            continue
        parts = _sort_topics(topics[i] for i in indices)  # largest first
        members = _sort_ids({nid for p in parts for nid in p.member_ids})
        merged.append(
            TopicCluster(
                keyword=parts[0].keyword,
                label=" / ".join(p.label for p in parts[:3]),
                member_ids=members,
                df=len(members),
                keywords=tuple(p.keyword for p in parts),
            )
        )
    return _sort_topics(merged)
