"""Is there an answer here at all? The query-level decision the floor takes before the hits'
own relevance (#37).

A relevance is a hit's estimated probability of being relevant, and one threshold on it cannot
tell a question nothing answers from one whose answer is phrased unlike it: on LoCoMo the turns'
floor that answered ≤ 10 % of the unanswerable questions cut 8 % of the answerable ones' answers.
What tells them apart is how the candidates of one search look together, whatever their order:

- `cos_z`: how far the best cosine stands above the cosines of every candidate, in standard
  deviations (a question nothing answers is about equally near to everything: a flat spread);
- `gap`: the same distance in cosine (the best less the candidates' mean);
- `top_cos`: the best cosine itself (the model's scale);
- `held`: the largest share of the query's Σ IDF one hit's matched terms carry (a question whose
  words are nowhere matches only on its common ones);
- `top`: the best relevance (weighed as log-odds);
- `absent`: the share of the query's Σ IDF on words no record holds (of the scripts the index
  holds words in: a question in another language misses its words for want of a translation),
  times the records searched over `_lexical.ABSENT_RECORDS` (at most 1): no page of 782 names
  "conda", while most words of a paraphrase are missing from four notes.

`Signals` (in `_hits`, beside the result it describes) reads them from a search's scored
candidates; `Gate` weighs them (a logistic score per kind, fitted by
`bench/floor_unanswerable.py` with every corpus held out in turn) and says whether the search
may answer. The shipped turns' gate weighs all of them but `absent` (fitted before it): the best
relevance and the best cosine alone answered more of LoCoMo's unanswerable questions held out
(5.1 % instead of 3.3 %) and of the unseen ones (16 % instead of 10.7 %), and got a memory of one
turn and a few LoCoMo sessions wrong (docs/benchmarks-history.md has the ablation). The notes'
gate weighs all six. A search that may not keeps only the hits
the floor always keeps (`_lexical.evident`: a rare query word verbatim, or first by both lists),
so an exact rare word is never cut by it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tideline.search._hits import Signals

#: A search with fewer candidates than this has no spread to read (a memory of one turn): a
#: gate that weighs the spread lets it answer and the floor alone decides.
MIN_SPREAD = 5


@dataclass(frozen=True)
class Gate:
    """A logistic score of a search's `Signals`; the search may answer when it reaches
    `threshold`."""

    threshold: float
    bias: float = 0.0
    top: float = 0.0
    top_cos: float = 0.0
    cos_z: float = 0.0
    gap: float = 0.0
    held: float = 0.0
    absent: float = 0.0

    def odds(self, s: Signals) -> float:
        """The score's log-odds (compared with the threshold's)."""
        return (
            self.bias
            + self.top * logit(s.top)
            + self.top_cos * s.top_cos
            + self.cos_z * s.cos_z
            + self.gap * s.gap
            + self.held * s.held
            + self.absent * s.absent
        )

    def answers(self, s: Signals) -> bool:
        """Whether the search may answer: its score reaches the threshold, or the gate reads
        the spread and there are too few candidates for one (`MIN_SPREAD`: the floor alone
        decides)."""
        if s.n < MIN_SPREAD and (self.cos_z or self.gap):
            return True
        return self.odds(s) >= logit(self.threshold)


def logit(p: float) -> float:
    """The log-odds of a probability (clipped away from 0 and 1)."""
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))
