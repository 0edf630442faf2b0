"""Query centring: take out of a query vector the direction every query in its language shares.

Why: e5 is anisotropic. Every query–record cosine sits in a narrow band (0.80–0.88 on the tldr
library), and much of a query vector says "a question, in Russian" rather than what it asks: a
translated question then lands near short generic records of any topic. Subtracting the mean
vector of reference questions in the query's language and renormalising leaves what the query
is about (docs/search.md, docs/benchmarks.md).

The reference set (`reference/queries.json`) is generic questions and requests written for this
purpose in seven languages (everyday, technical, personal memory), parallel across languages, so
each language's mean differs from the others by the language alone. Its per-language means are
precomputed for the bundled model (`reference/means.json`, `scripts/reference_means.py`); a
query from another model is left as it is. The language is the mean nearest to the query by
cosine, which needs no script tables and works for any language in the set (on the tldr
queries it does as well as script detection).

Only the ranking changes: `retrieve` searches with the centred vector, then gives every hit its
cosine distance to the query as embedded (`raw_distances`), so the relevance floors and the
distances users see keep their calibrated scale.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Protocol

import numpy as np

from tideline.search._hits import Hit

REFERENCE = "reference"
#: How much of the language's mean is taken out. The whole mean (1.0) helps the tldr library most
#: in some rows but costs LoCoMo's English conversations 2.3 pts of vector recall@5; 0.75 keeps
#: LoCoMo level (0.456 vs 0.460) and does better on the library overall (docs/benchmarks.md).
SHARE = 0.75
QUERIES = "queries.json"
MEANS = "means.json"


@dataclass(frozen=True)
class ReferenceMeans:
    """The per-language mean query vectors of one model: `means[i]` belongs to `languages[i]`."""

    model_id: str
    languages: tuple[str, ...]
    means: np.ndarray

    @cached_property
    def units(self) -> np.ndarray:
        norms: np.ndarray = np.linalg.norm(self.means, axis=1, keepdims=True)
        return np.asarray(self.means / norms, dtype=np.float32)

    def language(self, qvec: np.ndarray) -> int:
        """The row of the mean nearest to `qvec` by cosine."""
        return int(np.argmax(self.units @ qvec))

    def centre(self, qvec: np.ndarray, share: float = SHARE) -> np.ndarray:
        """`qvec` less `share` of its language's mean, unit length (unchanged if that leaves
        nothing)."""
        q = np.asarray(qvec, dtype=np.float32)
        out = q - share * self.means[self.language(q)]
        norm = float(np.linalg.norm(out))
        return (out / norm).astype(np.float32) if norm > 1e-6 else q


def reference_queries() -> dict[str, list[str]]:
    """The shipped reference questions, by language code."""
    text = (resources.files("tideline.search") / REFERENCE / QUERIES).read_text("utf-8")
    data: dict[str, list[str]] = json.loads(text)
    return data


def queries_digest(queries: dict[str, list[str]]) -> str:
    """Which reference set a means file was made from (a stale file fails its test)."""
    text = json.dumps(queries, ensure_ascii=False, sort_keys=True)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


@cache
def reference_means() -> dict[str, ReferenceMeans]:
    """The shipped means, by model id (read once per process)."""
    text = (resources.files("tideline.search") / REFERENCE / MEANS).read_text("utf-8")
    data = json.loads(text)
    langs = tuple(data["means"])
    means = np.array([data["means"][lang] for lang in langs], dtype=np.float32)
    return {data["model_id"]: ReferenceMeans(data["model_id"], langs, means)}


def centre_query(qvec: np.ndarray, model_id: str | None) -> np.ndarray:
    """The centred query vector for searching a space of `model_id`; `qvec` itself when the
    model has no reference means (or the dimensions differ)."""
    ref = reference_means().get(model_id or "")
    if ref is None or ref.means.shape[1] != len(qvec):
        return qvec
    return ref.centre(qvec)


class _Distances(Protocol):
    def distances(self, qvec: np.ndarray, ids: Sequence[int]) -> dict[int, float]: ...


def raw_distances(indexes: Sequence[_Distances], hits: Sequence[Hit], qvec: np.ndarray) -> None:
    """Give each hit that has a vector distance its distance to `qvec` (the query as embedded)
    instead of the centred one it was ranked by; `indexes[n]` is the index of source `n`."""
    by_source: dict[int, list[Hit]] = {}
    for h in hits:
        if h.vec_distance is not None:
            by_source.setdefault(h.source, []).append(h)
    for n, mine in by_source.items():
        known = indexes[n].distances(qvec, [h.id for h in mine])
        for h in mine:
            h.vec_distance = known.get(h.id, h.vec_distance)
