"""What backs a fact: the sessions and the valid time of its evidence, and the confidence they
give it. Pure rules; the `Profile` service and the applier feed them the rows.

An evidence row names a turn and/or an observation. Its *session* is the turn's (through
memory's public API), else the observation's; a row whose session is unknown counts as one
session of its own. Over a fact's evidence:

- `sessions` — distinct sessions of the supporting evidence; `against` — of the evidence
  against it. "Consistent in 2+ sessions" (the seed's confirmed) and "well-evidenced" count these,
  never rows: a fact said five times in one conversation is still one session's word.
- `session_starts` — when each supporting session first backed it (valid time, sorted): when a
  rule that counts sessions was met (`_lifecycle.confirmed_at`, `established_at`).
- `said_from` / `said_to` — the earliest and latest valid time of the supporting evidence: each
  row's `said_at` (stored when it was linked, from its turn's own timestamp: `_valid`), else its
  turn's timestamp, so an imported 2023 conversation backs its facts in 2023.
- confidence — a Beta estimate: the draft's confidence `prior` (the model's reading of the first
  mention) counts as `PRIOR_WEIGHT` sessions, every further supporting session as one success,
  every session against as one failure:

      confidence = (PRIOR_WEIGHT · prior + (sessions − 1)) / (PRIOR_WEIGHT + (sessions − 1) + against)

  New (1 session, prior 0.5): 0.5; a second session: 0.67; a tenth: 0.91; one session against a
  new fact: 0.33. Never 0 or 1; recomputed whenever the fact gains evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tideline.profile._facts import Link
from tideline.profile._records import Evidence, Fact

PRIOR_WEIGHT = 2.0

#: turn id → (session id, the turn's own timestamp)
TurnInfo = Mapping[int, tuple[int, str]]


@dataclass(frozen=True)
class Backing:
    session_ids: tuple[int, ...]  # known sessions of the supporting evidence
    sessions: int  # ... plus one per supporting row whose session is unknown
    against_ids: tuple[int, ...]
    against: int
    said_from: str | None
    said_to: str | None
    session_starts: tuple[str, ...] = ()


def links_of(evidence: Sequence[Evidence]) -> list[Link]:
    return [(e.turn_id, e.observation_id, e.polarity, e.said_at) for e in evidence]


def backing(
    links: Sequence[Link], turns: TurnInfo, observations: Mapping[int, int | None]
) -> Backing:
    """Sessions and valid-time span of one fact's evidence rows (turn, observation, polarity,
    said at)."""
    known: dict[str, set[int]] = {"support": set(), "against": set()}
    unknown = {"support": 0, "against": 0}
    said: list[str] = []
    starts: dict[int, str] = {}
    for turn_id, observation_id, polarity, said_at in links:
        session, ts = None, said_at
        if turn_id is not None and turn_id in turns:
            session, turn_ts = turns[turn_id]
            ts = ts or turn_ts
        elif observation_id is not None:
            session = observations.get(observation_id)
        if ts and polarity == "support":
            said.append(ts)
            if session is not None:
                starts[session] = min(starts.get(session, ts), ts)
        if session is None:
            unknown[polarity] += 1
        else:
            known[polarity].add(session)
    return Backing(
        tuple(sorted(known["support"])),
        len(known["support"]) + unknown["support"],
        tuple(sorted(known["against"])),
        len(known["against"]) + unknown["against"],
        min(said) if said else None,
        max(said) if said else None,
        tuple(sorted(starts.values())),
    )


def confidence(prior: float, sessions: int, against: int) -> float:
    """The module doc's formula, rounded to 4 places."""
    more = max(sessions, 1) - 1
    value = (PRIOR_WEIGHT * prior + more) / (PRIOR_WEIGHT + more + against)
    return round(min(1.0, max(0.0, value)), 4)


def apply_backing(fact: Fact, b: Backing) -> None:
    """Write a backing onto a fact's computed fields."""
    fact.session_ids, fact.sessions = list(b.session_ids), b.sessions
    fact.against_ids, fact.against = list(b.against_ids), b.against
    fact.said_from, fact.said_to = b.said_from, b.said_to
    fact.session_starts = list(b.session_starts)
