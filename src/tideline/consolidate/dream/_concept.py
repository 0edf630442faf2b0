"""The self-concept: the agent's reflections, as injection (T0) and combing read them.

- A sentence said again is not a new one. Combing skips a self-concept sentence that repeats one
  already held — the same words once normalised (NFKC, case, spacing, end punctuation), or nearly
  (`difflib` similarity ≥ 0.9) — and adds the memories it cited to the grounds of the one held.
  Reading skips repeats too, so a database written before this rule shows each sentence once.
- A reflection a dream left (it rests on a narrative of kind `dream`) is imagined. It feeds the
  next day's combing as one of yesterday's memories, never the self-concept itself: only waking
  reflections stand in T0 and in combing's "self-concept" input. A waking reflection (combing's,
  drift's) never rests on an imagined one: combing refuses such grounds, drift never walks there.
- Drift's reflections are de-duplicated like combing's (`repeated`).
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from tideline.consolidate.dream._basis import Basis
from tideline.memory import Memory, Narrative
from tideline.profile import normalise

SIMILAR = 0.9  # this close (difflib ratio of the normalised texts) is the same sentence
COMPARED = 200  # the latest reflections a new sentence is compared with
SCANNED = 5  # read this many times `limit` reflections to find `limit` distinct waking ones


def same_sentence(a: str, b: str) -> bool:
    ka, kb = normalise(a), normalise(b)
    return ka == kb or SequenceMatcher(None, ka, kb, autojunk=False).ratio() >= SIMILAR


def dreamt(memory: Memory, basis: Basis, narratives: Sequence[Narrative]) -> set[int]:
    """Which of these narratives are dreams, or reflections a dream left."""
    grounds = basis.of([n.id for n in narratives if n.kind == "reflection"])
    cited = sorted({g for gs in grounds.values() for g in gs})
    dreams = {n.id for n in memory.narratives.get(cited, links=False) if n.kind == "dream"}
    from_dream = {nid for nid, gs in grounds.items() if dreams & set(gs)}
    return {n.id for n in narratives if n.kind == "dream"} | from_dream


def held(
    memory: Memory, basis: Basis, limit: int, before: str | None = None
) -> list[tuple[Narrative, list[int]]]:
    """The self-concept: the latest distinct waking reflections, newest first, with the
    memories each rests on; with `before`, the self-concept as it stood then (valid time)."""
    found = memory.narratives.latest("reflection", max(limit, 1) * SCANNED, before)
    imagined = dreamt(memory, basis, found)
    kept: list[Narrative] = []
    for n in found:
        if n.id not in imagined and not any(same_sentence(n.gesture, k.gesture) for k in kept):
            kept.append(n)
    kept = kept[:limit]
    grounds = basis.of([n.id for n in kept])
    return [(n, grounds.get(n.id, [])) for n in kept]


def repeated(text: str, held: Sequence[Narrative]) -> Narrative | None:
    """The reflection already held that `text` says again, if any."""
    return next((n for n in held if same_sentence(text, n.gesture)), None)
