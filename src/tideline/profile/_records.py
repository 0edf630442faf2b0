"""The profile's records and vocabularies. Each record has `to_dict()` for JSON drivers.

Times are the stored UTC text form (`YYYY-MM-DDTHH:MM:SSZ`, `tideline.clock`). Two clocks:
*valid time* (when it was said or true in the user's life, from the turns' own timestamps:
`valid_from`, `valid_to`, `said_at`, `last_seen_at`, `expires_at`, `valid_at`, a change's `at`)
and *record time* (when Tideline learnt, changed or retired it: `created_at`, `updated_at`,
`retired_at`, `recorded_at`, `made_at`). Rules about age, decay and recency read valid time.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tideline.profile._statuses import ACTIVE_STATUSES as ACTIVE_STATUSES
from tideline.profile._statuses import FINAL_STATUSES as FINAL_STATUSES
from tideline.profile._statuses import STATUSES as STATUSES

SOURCE_TYPES = ("stated", "inferred")
POLARITIES = ("support", "against")
OBSERVATION_TYPES = ("statement", "contradiction", "preference", "behaviour", "other")
EDGE_KINDS = ("causes", "related_to", "supports", "contradicts", "temporal", "hierarchy")
STRATEGY_KINDS = ("clarify", "probe", "verify")
STRATEGY_STATUSES = ("open", "asked", "resolved")
STRATEGY_OUTCOMES = ("answered", "obsolete", "expired")  # how a resolved strategy ended
EXPIRED = "expired"  # why a fact nobody mentioned again was closed (an expiry may be withdrawn)
EVENT_STATUSES = ("active", "closed")
RUN_STATUSES = ("running", "done", "failed", "skipped")
RUN_STATUSES_V1 = ("running", "done", "failed")  # before profile migration 6


@dataclass
class _Dict:
    """A record's JSON form (a field-less dataclass, so `asdict` knows `self` is one)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Evidence(_Dict):
    """Why a fact is believed (or doubted): a turn and/or an observation, never free text."""

    fact_id: int
    turn_id: int | None
    observation_id: int | None
    polarity: str
    created_at: str
    said_at: str | None = None  # valid time: when the turn (or observation) was said
    text: str | None = None  # the turn's text, filled through memory's public API


@dataclass
class Fact(_Dict):
    id: int
    subject: str  # "user", "self" or a person's name
    category: str
    value: str
    status: str
    confidence: float
    source_type: str
    mention_count: int
    decay_days: int | None  # None: never expires
    expires_at: str | None
    valid_from: str  # valid time: its first evidence was said (or when it became true)
    valid_to: str | None  # valid time: the end of a closed or rejected fact
    supersedes: int | None
    merged_into: int | None
    last_seen_at: str  # valid time: its latest supporting evidence was said
    rejected_why: str | None
    created_at: str  # record time: when Tideline learnt it
    updated_at: str
    retired_at: str | None = None  # record time: when it was closed or rejected
    evidence_count: int = 0  # supporting evidence rows
    prior: float | None = None  # the confidence it was created with (`_backing.confidence`)
    evidence: list[Evidence] = field(default_factory=list)
    # What backs it, filled when its evidence is read (`_backing`): the sessions of its
    # supporting evidence and of the evidence against it, and the valid time (the turns' own
    # timestamps) of its first and latest support; the live facts that supersede it.
    sessions: int = 0
    against: int = 0
    session_ids: list[int] = field(default_factory=list)
    against_ids: list[int] = field(default_factory=list)
    said_from: str | None = None
    said_to: str | None = None
    session_starts: list[str] = field(default_factory=list)  # when each session first backed it
    disputed_by: list[int] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES


@dataclass
class StatusChange(_Dict):
    fact_id: int
    from_status: str | None  # None: the fact was created
    to_status: str
    at: str  # valid time: when the change took effect in the user's life
    why: str | None
    run_id: int | None
    recorded_at: str = ""  # record time: when Tideline made the change


@dataclass
class FactTimeline(_Dict):
    """A fact, the supersedes chain it belongs to (oldest first) and every status change in it."""

    fact: Fact
    chain: list[Fact]
    changes: list[StatusChange]


@dataclass
class ActiveFact(_Dict):
    """A fact in the active profile with its injection weight (lower near expiry)."""

    fact: Fact
    weight: float


@dataclass
class Observation(_Dict):
    id: int
    session_id: int | None
    turn_ids: list[int]
    type: str
    topic: str
    text: str
    about: str  # "user" or a third party's name
    processed: bool
    run_id: int | None
    created_at: str
    said_at: str | None = None  # valid time: when its first turn was said


@dataclass
class Relationship(_Dict):
    id: int
    name: str
    relation: str
    details: str
    mention_count: int
    status: str
    history: list[dict[str, Any]]  # [{"status", "at" (valid), "recorded_at"}], oldest first
    first_seen_at: str  # valid time: the first and the latest mention
    last_seen_at: str
    created_at: str = ""  # record time
    updated_at: str = ""


@dataclass
class Event(_Dict):
    id: int
    title: str
    details: str
    importance: int
    decay_days: int | None
    valid_from: str  # valid time: the event's date range (a day, a week, a month, ...)
    valid_to: str | None
    expires_at: str | None  # valid time: the end of its range + decay_days
    status: str
    closed_at: str | None  # valid time of the close (its expiry, or when a person closed it)
    created_at: str  # record time
    said_at: str | None = None  # valid time: when it was mentioned (what "last week" is read from)
    phrase: str = ""  # the time expression as said ("last week"), when there was one
    retired_at: str | None = None  # record time of the close


@dataclass
class Edge(_Dict):
    id: int
    kind: str
    from_fact: int
    to_fact: int
    created_at: str  # record time
    removed_at: str | None
    valid_from: str | None = None  # valid time: both facts hold from then ...
    valid_to: str | None = None  # ... until the first of them ended


@dataclass
class Strategy(_Dict):
    id: int
    kind: str
    fact_id: int | None
    question: str
    status: str
    created_at: str  # record time
    updated_at: str
    outcome: str | None = None  # once resolved: answered, obsolete or expired
    resolved_why: str | None = None  # what answered it, or why it no longer stands
    resolved_at: str | None = None
    run_id: int | None = None  # the Sleep run that made it
    dream_run_id: int | None = None  # or the dream run (combing's probes)
    valid_from: str | None = None  # valid time: when the question arose (its fact's time)
    valid_to: str | None = None  # valid time: when it was settled


@dataclass
class UserModelEntry(_Dict):
    dimension: str
    value: str
    evidence: list[Any]
    made_at: str  # record time
    valid_at: str | None = None  # valid time: the conversation's present it was read at


@dataclass
class Trajectory(_Dict):
    id: int
    phase: str
    direction: str
    stability: str
    anchors: list[Any]  # entries: a fact id, {"fact_id": n, ...} or free text
    unstable_areas: list[Any]
    momentum: str
    made_at: str  # record time
    sessions_since: int
    valid_at: str | None = None  # valid time: the conversation's present it describes

    @property
    def anchor_fact_ids(self) -> set[int]:
        """Facts the trajectory names as anchors: they mature faster (see `_decay`)."""
        ids = set()
        for a in self.anchors:
            if isinstance(a, int) and not isinstance(a, bool):
                ids.add(a)
            elif isinstance(a, dict) and isinstance(a.get("fact_id"), int):
                ids.add(a["fact_id"])
        return ids


@dataclass
class Snapshot(_Dict):
    id: int
    text: str
    data: dict[str, Any]
    made_at: str  # record time
    run_id: int | None
    valid_at: str | None = None  # valid time: the conversation's present it shows


@dataclass
class SleepRun(_Dict):
    id: int
    status: str
    steps: list[Any]
    tokens_in: int
    tokens_out: int
    errors: list[Any]
    prompt_versions: dict[str, Any]
    started_at: str
    finished_at: str | None
    version: int | None  # the profile version the run produced, when it applied
