"""Backfill source links: link old narratives (Track A, no `source_links`) to their likely source turn.

For each narrative without links that has a vector:
1. candidates = the `candidates` (20) turns that best match its gesture + context lexically (BM25
   over the turn index);
2. score(turn) = cosine(narrative vector, turn vector) + `lexical_weight` (0.3) · bm25 / best bm25
   (`retrieve` with the lexical candidate list only and the weighted fusion's lexical share);
3. the best turn is linked when it beats the runner-up by at least `margin` (0.1). A narrow win
   means the evidence is ambiguous, and a wrong link is worse than none, so nothing is linked.

Calibrated on LoCoMo conv-26 (184 observations written as narratives without links, each with its
true `dia_id`): the best candidate is right 74% of the time; with margin 0.1, 54% of narratives get
a link and 96% of those links are right. Every decision is reported (linked, ambiguous with both
candidates, no candidate, no vector); with `dry_run` nothing is written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from tideline.errors import InvalidInput
from tideline.memory import Memory
from tideline.search import Policy, Scope, retrieve

#: The backfill's ranking: lexical candidates only, cosine + 0.3 × BM25 / best (see above).
BACKFILL = Policy(
    fusion="weighted", boost=0.0, lex_share=0.3, lists=("lex",), stop_words=False, kind="turn"
)

__all__ = ["BackfillReport", "LinkDecision", "backfill_source_links"]


@dataclass
class LinkDecision:
    """What happened to one narrative: `status` is linked, ambiguous, no_candidate or no_vector."""

    narrative_id: int
    gesture: str
    status: str
    turn_id: int | None = None
    score: float | None = None
    runner_up_id: int | None = None
    runner_up_score: float | None = None


@dataclass
class BackfillReport:
    examined: int
    linked: int
    ambiguous: int
    no_candidate: int
    no_vector: int
    dry_run: bool
    margin: float
    decisions: list[LinkDecision] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def backfill_source_links(
    memory: Memory,
    *,
    margin: float = 0.1,
    lexical_weight: float = 0.3,
    candidates: int = 20,
    dry_run: bool = False,
) -> BackfillReport:
    """Propose (and unless `dry_run`, write) one source link per unlinked narrative."""
    if not 0.0 <= margin <= 2.0:
        raise InvalidInput(f"margin={margin}: use a score gap between 0 and 2, e.g. 0.1")
    if candidates < 1:
        raise InvalidInput(f"candidates={candidates}: look at least at 1 turn")
    rows = sorted(memory.narratives.unlinked(), key=lambda r: r["id"])
    report = BackfillReport(len(rows), 0, 0, 0, 0, dry_run, margin)
    if not rows:
        return report
    nids, nmat = memory.narratives.index.vectors([r["id"] for r in rows])
    nvec = dict(zip(nids.tolist(), _unit(nmat), strict=True))
    policy = replace(BACKFILL, lex_share=lexical_weight, depth=candidates)
    links: list[tuple[int, int]] = []
    for r in rows:
        decision = LinkDecision(r["id"], r["gesture"], "no_vector")
        report.decisions.append(decision)
        vector = nvec.get(r["id"])
        if vector is None:
            report.no_vector += 1
            continue
        text = f"{r['gesture']} {r['context']}"[:2000]
        found = retrieve(Scope(memory.raw.index), text, vector, candidates, "hybrid", policy)
        scored = sorted(
            ((round(h.fused or 0.0, 6), h.id) for h in found.hits if h.vec_distance is not None),
            key=lambda s: (-s[0], s[1]),
        )
        if not scored:
            decision.status = "no_candidate"
            report.no_candidate += 1
            continue
        decision.score, decision.turn_id = scored[0]
        if len(scored) > 1:
            decision.runner_up_score, decision.runner_up_id = scored[1]
        if len(scored) > 1 and scored[0][0] - scored[1][0] < margin:
            decision.status = "ambiguous"
            report.ambiguous += 1
            continue
        decision.status = "linked"
        report.linked += 1
        links.append((r["id"], scored[0][1]))
    if links and not dry_run:
        memory.narratives.add_links(links)
    return report


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0.0, 1.0, norms)
