"""The one score: a relevance from 0 to 1, the estimated probability that a hit is relevant.

Fusion orders candidates by rank or by per-query normalised scores, which say nothing about
whether the best of them is any good: a top turn always scored 1.0, a Russian question's top
turn 0.500, scores went above 1. The score stage turns each hit's evidence into a probability,
per kind of record, with a logistic calibration fitted on the development data
(`bench/calibrate.py`: LoCoMo's evidence turns and observations, the tldr pages):

    relevance = σ(bias + search_cos · C + best_lexical · B                  (the search's)
                  + cos · cosine + lexical · L + keyword · K + fused · F)    (the hit's own)

The hit's own evidence — cosine: its cosine similarity to the query as embedded (the model's
scale); L: its lexical evidence, 0–1 (`_lexical`: its BM25 over the query's Σ IDF); K: 1 when it
holds every typed word verbatim; F: its fused score over the best of this search (the levers
included) — is what orders a search's hits. Its weights are fitted first, on whether a hit *is*
the evidence (a LoCoMo evidence turn, a narrative linking to one, the tldr page asked for), so
the order is the best the parts give: fitted instead on "at the answer" (the evidence or the
turn next to it) it lifted the neighbours of an answer over a second piece of evidence and cost
multi-hop and temporal questions 1–2 points. The search's own evidence — C: the best cosine of
this search (a question nothing answers has no near record at all), B: the best lexical evidence
of its hits (0 in the shipped fit: `bench/calibrate.py` explains why) — is the same for every
hit of one search: it moves them together, so it never
changes their order, only how likely the best of them is. Those weights, and the scale of the
hit's own part, are fitted second, on whether a hit is *at the answer* (the evidence or the turn
next to it: what a person reading it in its conversation finds), on the ten hits a search shows
and on questions of another conversation, where nothing is relevant. A kind without its own fit
uses `record`; a hit without a vector (none yet, or a lexical search) and an embedder without a
fit use the lexical calibration, fitted without the cosines.

The same relevance orders every list (across kinds too: a narrative at 0.62 and a turn at 0.71
are comparable), is cut by the one floor, and is shown. The floor is a probability too
(`search_min_score`: `auto` is the fitted one, chosen as the highest floor that costs at most one
point of evidence recall@10 on the development data, docs/benchmarks.md). Notes take the turns'
fit but have a floor of their own (`Fit.floors`): the turns' left out 12 points of the tldr
library's recall@5, most of them questions in another language than their page.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from tideline.errors import ConfigError, InvalidInput
from tideline.search._answer import Gate
from tideline.search._hits import Hit

#: The calibration used when a search has no query vector (or the model has no fit).
LEXICAL = "lexical"
REFERENCE = "reference"
CALIBRATION = "calibration.json"


@dataclass(frozen=True)
class Calibration:
    """The logistic weights of one kind (see the module docstring)."""

    bias: float
    cos: float = 0.0
    search_cos: float = 0.0
    best_lexical: float = 0.0
    lexical: float = 0.0
    keyword: float = 0.0
    fused: float = 0.0

    def relevance(
        self, hit: Hit, best: float, search_cos: float | None, best_lexical: float
    ) -> float:
        """`search_cos` None: a calibration without the cosine (see the module docstring);
        `best` and `best_lexical`: the search's best fused score and lexical evidence."""
        z = self.bias + self.best_lexical * best_lexical + self.lexical * (hit.lexical or 0.0)
        z += self.keyword * float(hit.keyword_match)
        z += self.fused * (max(hit.fused or 0.0, 0.0) / best if best > 0 else 0.0)
        if search_cos is not None and hit.vec_distance is not None:
            z += self.cos * (1.0 - hit.vec_distance) + self.search_cos * search_cos
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


@dataclass(frozen=True)
class Fit:
    """One model's calibrations by kind, its floor, the floors of kinds that have their
    own (`floors`: notes, whose floor is chosen on the library's searches, docs/search.md) and
    the kinds' answer gates (`gates`, `_answer`: is there an answer among the hits at all)."""

    floor: float
    kinds: dict[str, Calibration]
    floors: dict[str, float] = field(default_factory=dict)
    gates: dict[str, Gate] = field(default_factory=dict)

    def of(self, kind: str) -> Calibration:
        return self.kinds.get(kind) or self.kinds["record"]

    def floor_of(self, kind: str | None) -> float:
        return self.floors.get(kind, self.floor) if kind is not None else self.floor


@cache
def fits() -> dict[str, Fit]:
    """The shipped calibrations, by model id (and `LEXICAL`), read once per process."""
    text = (resources.files("tideline.search") / REFERENCE / CALIBRATION).read_text("utf-8")
    data = json.loads(text)
    return {
        model: Fit(
            float(fit["floor"]),
            {kind: Calibration(**weights) for kind, weights in fit["kinds"].items()},
            {kind: float(floor) for kind, floor in fit.get("floors", {}).items()},
            {kind: Gate(**gate) for kind, gate in fit.get("gates", {}).items()},
        )
        for model, fit in data["models"].items()
    }


def fit_for(model_id: str | None) -> tuple[Fit, bool]:
    """The fit for searches with this model's vectors, and whether it reads the cosine (no
    fit for the model: the lexical one, which does not)."""
    known = fits()
    if model_id is not None and model_id in known:
        return known[model_id], True
    return known[LEXICAL], False


def auto_floor(model_id: str | None, kind: str | None = None) -> float:
    """The calibrated floor for searches of `kind` with this model (`search_min_score =
    auto`): the kind's own floor when it has one, else the model's."""
    return fit_for(model_id)[0].floor_of(kind)


def gate_for(model_id: str | None, kind: str) -> Gate | None:
    """The answer gate of searches of `kind` with this model's vectors (None: none, and a
    search without vectors or a model without a fit has none)."""
    known = fits()
    return known[model_id].gates.get(kind) if model_id is not None and model_id in known else None


def score(hits: Sequence[Hit], kind: str, model_id: str | None, vectors: bool) -> None:
    """Give every hit its relevance (`score`), keeping the fusion's score in `fused`.

    `vectors`: the search had a query vector, so cosines are on the model's scale."""
    if not hits:
        return
    for h in hits:
        if h.fused is None:
            h.fused = h.score
    best = max((h.fused or 0.0) for h in hits)
    lexical = max((h.lexical or 0.0) for h in hits)
    nearest = max((1.0 - h.vec_distance for h in hits if h.vec_distance is not None), default=0.0)
    fit, reads_cos = fit_for(model_id if vectors else None)
    cal = fit.of(kind)
    plain = fits()[LEXICAL].of(kind)
    for h in hits:
        h.type = kind if h.type == "record" else h.type
        if reads_cos and h.vec_distance is not None:
            h.score = cal.relevance(h, best, nearest, lexical)
        else:
            h.score = plain.relevance(h, best, None, lexical)


def truncated(hits: list[Hit], share: float) -> list[Hit]:
    """Score-adaptive truncation: the hits down to where the relevance falls below `share` of
    the best hit's (0: all of them)."""
    if share <= 0 or not hits:
        return hits
    cut = hits[0].score * share
    return [h for h in hits if h.score >= cut]


def interleave(*lists: Sequence[Hit]) -> list[Hit]:
    """Hits of several kinds in one list, by relevance (comparable across kinds)."""
    merged = [h for hits in lists for h in hits]
    return sorted(merged, key=lambda h: -round(h.score, 12))


def resolve_floor(value: str | float, model_id: str | None, kind: str | None = None) -> float:
    """The relevance floor from the `search_min_score` setting: a probability as given, or
    `auto` (the calibrated floor for this model's searches of `kind`)."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return auto_floor(model_id, kind)
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not 0.0 <= number <= 1.0:
        raise ConfigError(
            f"setting search_min_score={value!r} must be a relevance from 0 to 1 or 'auto'"
        )
    return number


def check_floor(value: float) -> float:
    """A caller's `min_score`: a relevance from 0 to 1 (0 shows everything)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if isinstance(value, bool) or not 0.0 <= number <= 1.0:
        raise InvalidInput(
            f"min_score={value!r}; pass a relevance from 0 to 1 (0 shows everything)"
        )
    return number


def by_best(
    groups: Sequence[tuple[str, float]], hits: Sequence[Hit], group: Callable[[Hit], str]
) -> list[tuple[str, float]]:
    """Aggregation to groups (a note's collection): each group as relevant as its own score (a
    collection's description) or its best hit, whichever is higher; best first, equal ones in
    the order given."""
    best: dict[str, float] = {}
    for h in hits:
        g = group(h)
        best[g] = max(best.get(g, 0.0), h.score)
    scored = [(g, max(own, best.get(g, 0.0))) for g, own in groups]
    return sorted(scored, key=lambda x: -round(x[1], 12))
