"""A changeset: every change one Sleep run wants, computed without touching the database.

The pipeline reads a `ProfileView` (with its `version`), spends as long as it needs on the LLM,
and records what it decided here. `Profile.apply` then writes it all in one short transaction,
or nothing: it refuses when the profile's version moved since the read (`ProfileChanged`).

New facts and observations get a `Ref` (a placeholder) so later changes in the same changeset can
point at them before they have ids. Lifecycle rules are checked at apply time, against the rows
as they are inside the transaction.

Valid times travel with the changes (`valid_from`, `seen_at`, `at`, `valid_at`: when it was said
or true in the user's life). A change that leaves one out gets it at apply time from its
evidence turns, else the apply time (`_apply`); the Sleep pipeline always gives them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from tideline.errors import InvalidInput
from tideline.profile._drafts import (
    EventDraft,
    FactDraft,
    ObservationDraft,
    PersonMention,
    choice,
    ids,
    stamp,
    text,
)
from tideline.profile._records import (
    EDGE_KINDS,
    POLARITIES,
    STRATEGY_KINDS,
    STRATEGY_OUTCOMES,
)


@dataclass(frozen=True)
class Ref:
    """A fact or observation created earlier in the same changeset."""

    kind: str  # "fact" | "observation" | "event"
    n: int


FactRef = int | Ref
ObservationRef = int | Ref


@dataclass(frozen=True)
class NewFact:
    ref: Ref
    draft: FactDraft
    supersedes: FactRef | None
    turn_ids: tuple[int, ...]
    observation: ObservationRef | None


@dataclass(frozen=True)
class Link:
    """Evidence for (support: a mention, the fact lives longer) or against a fact."""

    fact: FactRef
    polarity: str
    turn_ids: tuple[int, ...]
    observation: ObservationRef | None
    seen_at: str | None = None  # valid time of this evidence; default: its latest turn's


@dataclass(frozen=True)
class Because:
    """A reason that names another fact (`superseded by #12`): the fact may be new in this
    changeset, so its id is written into the reason at apply time, never a placeholder."""

    relation: str  # "superseded by", "arbitration kept", ...
    fact: FactRef


@dataclass(frozen=True)
class Transition:
    fact: FactRef
    to: str
    why: str | None
    at: str | None  # the end time for closed/rejected; default: the apply time
    because: Because | None = None


@dataclass(frozen=True)
class Succession:
    """A person names the live fact that replaced another: it joins that fact's chain."""

    fact: int
    successor: int


@dataclass(frozen=True)
class Reopen:
    """An expiry withdrawn: evidence said before the fact expired arrived after a run had
    closed it for want of evidence, so the fact is believed again as it was."""

    fact: int


@dataclass(frozen=True)
class Merge:
    """Dedupe: `drop`'s evidence and mentions move onto `keep`; `drop` is closed, not deleted."""

    keep: FactRef
    drop: FactRef


@dataclass(frozen=True)
class SetDecay:
    fact: FactRef
    decay_days: int


@dataclass(frozen=True)
class SetConfidence:
    fact: FactRef
    confidence: float


@dataclass(frozen=True)
class NewObservation:
    ref: Ref
    draft: ObservationDraft


@dataclass(frozen=True)
class ObservationsProcessed:
    observations: tuple[ObservationRef, ...]


@dataclass(frozen=True)
class Mention:
    person: PersonMention


@dataclass(frozen=True)
class NewEvent:
    ref: Ref
    draft: EventDraft


@dataclass(frozen=True)
class CloseEvent:
    event_id: int | Ref
    at: str | None


@dataclass(frozen=True)
class NewEdge:
    kind: str
    from_fact: FactRef
    to_fact: FactRef
    valid_from: str | None = None  # default: the later of the two facts' starts


@dataclass(frozen=True)
class RestoreEdge:
    """An edge an expiry retired holds again: the expiry was withdrawn (`Reopen`) and the
    edge's other fact is believed too."""

    edge_id: int


@dataclass(frozen=True)
class NewStrategy:
    ref: Ref
    kind: str
    fact: FactRef | None
    question: str
    valid_from: str | None = None  # when the question arose; default: from its fact


@dataclass(frozen=True)
class ReopenStrategy:
    """A lapse withdrawn: the question had been settled `expired` by a run that had not yet
    heard words said before it lapsed; it stands open again, to be settled as they say."""

    strategy_id: int


@dataclass(frozen=True)
class StrategyStatus:
    strategy_id: int | Ref
    to: str
    outcome: str | None = None  # with `resolved`: answered, obsolete or expired
    why: str | None = None
    because: Because | None = None  # the fact that answered it, named by its real id
    at: str | None = None  # valid time the question was settled; default: the apply time


@dataclass(frozen=True)
class UserModel:
    dimension: str
    value: str
    evidence: tuple[int, ...]  # the facts the reading rests on
    valid_at: str | None = None


class TrajectoryFields(TypedDict, total=False):
    """What a trajectory says (seed step 11); anchors are the facts it rests on."""

    phase: str
    direction: str
    stability: str
    anchors: Sequence[FactRef]
    unstable_areas: list[str]
    momentum: str
    sessions_since: int


@dataclass(frozen=True)
class NewTrajectory:
    fields: TrajectoryFields
    valid_at: str | None = None


@dataclass(frozen=True)
class NewSnapshot:
    text: str
    data: dict[str, Any]
    valid_at: str | None = None


@dataclass(frozen=True)
class RebuildSnapshot:
    """The snapshot rendered from the rows as they stand at this point of the transaction."""

    valid_at: str | None = None


@dataclass(frozen=True)
class Digest:
    """What extraction said of a session: summary and tags, or why it was skipped."""

    session_id: int
    through_turn_id: int
    summary: str
    tags: tuple[str, ...]
    skipped: str | None
    valid_from: str | None = None  # when the digested turns were said
    valid_to: str | None = None


@dataclass(frozen=True)
class SessionProcessed:
    session_id: int
    through_turn_id: int


Op = (
    NewFact
    | Link
    | Transition
    | Reopen
    | Succession
    | Merge
    | SetDecay
    | SetConfidence
    | NewObservation
    | ObservationsProcessed
    | Mention
    | NewEvent
    | CloseEvent
    | NewEdge
    | RestoreEdge
    | NewStrategy
    | ReopenStrategy
    | StrategyStatus
    | UserModel
    | NewTrajectory
    | NewSnapshot
    | RebuildSnapshot
    | Digest
    | SessionProcessed
)


@dataclass
class Changeset:
    """Ordered changes against the profile as it was at `base_version`."""

    base_version: int
    ops: list[Op] = field(default_factory=list)
    _refs: Counter[str] = field(default_factory=Counter, repr=False)

    def _ref(self, kind: str) -> Ref:
        self._refs[kind] += 1
        return Ref(kind, self._refs[kind])

    def __len__(self) -> int:
        return len(self.ops)

    def plan(self) -> dict[str, int]:
        """How many changes of each kind (what `--dry-run` shows)."""
        return dict(Counter(type(op).__name__ for op in self.ops))

    # -- facts -------------------------------------------------------------------------------
    def add_fact(
        self,
        draft: FactDraft,
        *,
        turn_ids: tuple[int, ...] = (),
        observation: ObservationRef | None = None,
        supersedes: FactRef | None = None,
    ) -> Ref:
        """A new suspected fact with its evidence; with `supersedes`, a disputed pair."""
        ref = self._ref("fact")
        self.ops.append(NewFact(ref, draft, supersedes, ids(turn_ids, "turn_ids"), observation))
        return ref

    def support(
        self,
        fact: FactRef,
        *,
        turn_ids: tuple[int, ...] = (),
        observation: ObservationRef | None = None,
        seen_at: str | None = None,
    ) -> None:
        """One more mention: evidence linked, mention_count + 1, expiry restarted from when it
        was said (`seen_at`, default: its latest turn's time)."""
        self._link(fact, "support", turn_ids, observation, seen_at)

    def against(
        self,
        fact: FactRef,
        *,
        turn_ids: tuple[int, ...] = (),
        observation: ObservationRef | None = None,
        seen_at: str | None = None,
    ) -> None:
        """Evidence that weakens a fact without proposing another value."""
        self._link(fact, "against", turn_ids, observation, seen_at)

    def _link(
        self,
        fact: FactRef,
        polarity: str,
        turn_ids: tuple[int, ...],
        observation: ObservationRef | None,
        seen_at: str | None,
    ) -> None:
        choice(polarity, "polarity", POLARITIES)
        if not turn_ids and observation is None:
            raise InvalidInput(f"evidence for fact {fact}: give turn_ids and/or an observation")
        self.ops.append(
            Link(fact, polarity, ids(turn_ids, "turn_ids"), observation, stamp(seen_at, "seen_at"))
        )

    def transition(
        self,
        fact: FactRef,
        to: str,
        *,
        why: str | None = None,
        at: str | None = None,
        because: Because | None = None,
    ) -> None:
        self.ops.append(Transition(fact, to, why, stamp(at, "at"), because))

    def confirm(self, fact: FactRef, why: str | None = None, *, at: str | None = None) -> None:
        self.transition(fact, "confirmed", why=why, at=at)

    def close(
        self,
        fact: FactRef,
        *,
        why: str | None = None,
        at: str | None = None,
        because: Because | None = None,
    ) -> None:
        self.transition(fact, "closed", why=why, at=at, because=because)

    def reject(self, fact: FactRef, why: str, *, because: Because | None = None) -> None:
        self.transition(fact, "rejected", why=text(why, "why", 2000), because=because)

    def succeed(self, fact_id: int, successor: int) -> None:
        """`successor` replaced `fact_id` (`Succession`); close the old one as well."""
        if fact_id == successor:
            raise InvalidInput(
                f"fact #{fact_id} cannot succeed itself; name the fact that replaced it"
            )
        self.ops.append(Succession(fact_id, successor))

    def reopen(self, fact_id: int) -> None:
        """Withdraw the expiry of a fact closed by one (`Reopen`)."""
        self.ops.append(Reopen(fact_id))

    def merge(self, keep: FactRef, drop: FactRef) -> None:
        if keep == drop:
            raise InvalidInput(f"merge: fact #{keep} cannot be merged into itself")
        self.ops.append(Merge(keep, drop))

    def set_decay(self, fact: FactRef, decay_days: int) -> None:
        self.ops.append(SetDecay(fact, decay_days))

    def set_confidence(self, fact: FactRef, confidence: float) -> None:
        if not 0.0 <= confidence <= 1.0:
            raise InvalidInput(f"confidence={confidence}: use a number from 0 to 1")
        self.ops.append(SetConfidence(fact, confidence))

    # -- observations, people, events --------------------------------------------------------
    def add_observation(self, draft: ObservationDraft) -> Ref:
        ref = self._ref("observation")
        self.ops.append(NewObservation(ref, draft))
        return ref

    def observations_processed(self, observations: list[ObservationRef]) -> None:
        self.ops.append(ObservationsProcessed(tuple(observations)))

    def mention(self, person: PersonMention) -> None:
        self.ops.append(Mention(person))

    def add_event(self, draft: EventDraft) -> Ref:
        ref = self._ref("event")
        self.ops.append(NewEvent(ref, draft))
        return ref

    def close_event(self, event: int | Ref, at: str | None = None) -> None:
        """Close an event (one made in this changeset too) at `at`, valid time."""
        self.ops.append(CloseEvent(event, stamp(at, "at")))

    # -- graph and strategies ----------------------------------------------------------------
    def add_edge(
        self, kind: str, from_fact: FactRef, to_fact: FactRef, valid_from: str | None = None
    ) -> None:
        choice(kind, "edge kind", EDGE_KINDS)
        if from_fact == to_fact:
            raise InvalidInput(f"edge {kind}: a fact cannot point at itself ({from_fact})")
        self.ops.append(NewEdge(kind, from_fact, to_fact, stamp(valid_from, "valid_from")))

    def restore_edge(self, edge_id: int) -> None:
        """An edge retired by a withdrawn expiry holds again (`RestoreEdge`)."""
        self.ops.append(RestoreEdge(edge_id))

    def add_strategy(
        self, kind: str, fact: FactRef | None, question: str, valid_from: str | None = None
    ) -> Ref:
        choice(kind, "strategy kind", STRATEGY_KINDS)
        ref = self._ref("strategy")
        self.ops.append(
            NewStrategy(
                ref, kind, fact, text(question, "question", 2000), stamp(valid_from, "valid_from")
            )
        )
        return ref

    def reopen_strategy(self, strategy_id: int) -> None:
        """Withdraw a strategy's lapse (`ReopenStrategy`)."""
        self.ops.append(ReopenStrategy(strategy_id))

    def resolve_strategy(
        self,
        strategy_id: int | Ref,
        outcome: str,
        why: str,
        *,
        because: Because | None = None,
        at: str | None = None,
    ) -> None:
        """A strategy ends: answered (by `because`, a fact), obsolete or expired — settled at
        `at` (valid time: when the answer was said, or when it lapsed)."""
        choice(outcome, "strategy outcome", STRATEGY_OUTCOMES)
        self.ops.append(
            StrategyStatus(
                strategy_id, "resolved", outcome, text(why, "why", 2000), because, stamp(at, "at")
            )
        )

    # -- outputs -----------------------------------------------------------------------------
    def set_user_model(
        self,
        dimension: str,
        value: str,
        evidence: tuple[int, ...] = (),
        valid_at: str | None = None,
    ) -> None:
        self.ops.append(
            UserModel(
                text(dimension, "dimension", 200),
                text(value, "value", 2000),
                evidence,
                stamp(valid_at, "valid_at"),
            )
        )

    def set_trajectory(
        self, valid_at: str | None = None, **fields: Unpack[TrajectoryFields]
    ) -> None:
        known = {"phase", "direction", "stability", "anchors", "unstable_areas", "momentum"}
        unknown = set(fields) - known - {"sessions_since"}
        if unknown:
            raise InvalidInput(
                f"trajectory: unknown field(s) {', '.join(sorted(unknown))}; "
                f"use {', '.join(sorted(known))}"
            )
        self.ops.append(NewTrajectory(fields, stamp(valid_at, "valid_at")))

    def snapshot(self, text_: str, data: dict[str, Any], valid_at: str | None = None) -> None:
        """A snapshot written as given; `data` may hold `Ref`s of facts made in this changeset,
        apply writes their ids."""
        self.ops.append(
            NewSnapshot(text(text_, "snapshot text", 200_000), dict(data), stamp(valid_at, "at"))
        )

    def rebuild_snapshot(self, valid_at: str | None = None) -> None:
        """Seed step 13: the snapshot rebuilt from the profile as this changeset leaves it (every
        change before this one applied), in the same transaction (`_snapshot.render`);
        `valid_at`: the conversation's present it shows (default: the apply time)."""
        self.ops.append(RebuildSnapshot(stamp(valid_at, "valid_at")))

    def session_processed(self, session_id: int, through_turn_id: int) -> None:
        """Seed step 14: this session's turns up to `through_turn_id` are digested."""
        ids((session_id, through_turn_id), "session/turn id")
        self.ops.append(SessionProcessed(session_id, through_turn_id))

    def digest(
        self,
        session_id: int,
        through_turn_id: int,
        *,
        summary: str = "",
        tags: tuple[str, ...] = (),
        skipped: str | None = None,
        valid_from: str | None = None,
        valid_to: str | None = None,
    ) -> None:
        """Step 2's record of one session (its summary and tags, or why it held nothing)."""
        ids((session_id, through_turn_id), "session/turn id")
        tags = tuple(text(t, "tag", 64) for t in tags)
        self.ops.append(
            Digest(
                session_id,
                through_turn_id,
                text(summary, "summary", 8000, empty=True),
                tags,
                skipped,
                stamp(valid_from, "valid_from"),
                stamp(valid_to, "valid_to"),
            )
        )
