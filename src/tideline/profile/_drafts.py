"""What the pipeline proposes: new facts, observations, mentions and events, checked on creation.

A draft is validated when it is built, so a bad LLM answer fails while the changeset is computed,
long before the write transaction, with a message naming the field and its limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tideline.clock import from_text
from tideline.errors import InvalidInput
from tideline.profile._records import OBSERVATION_TYPES, SOURCE_TYPES

DEFAULT_DECAY_DAYS = 90  # the shortest rung below the maturity table's 180
MAX_TEXT = 4000
MAX_NAME = 200


def text(value: object, name: str, limit: int, *, empty: bool = False) -> str:
    """A stripped string within `limit` characters (one rule for every text field)."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be text, got {type(value).__name__}")
    out = value.strip()
    if not out and not empty:
        raise InvalidInput(f"{name} is empty; give a non-empty value")
    if len(out) > limit:
        raise InvalidInput(f"{name} has {len(out)} characters; the limit is {limit}")
    return out


def choice(value: str, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidInput(f"{name}={value!r}: use one of {', '.join(allowed)}")
    return value


def days(value: int | None, name: str = "decay_days") -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{name}={value!r}: use a whole number of days ≥ 1, or None")
    return value


def stamp(value: str | None, name: str) -> str | None:
    """A stored-form UTC time (`2026-03-01T09:00:00Z`) or None."""
    if value is None:
        return None
    try:
        from_text(value)
    except (TypeError, ValueError):
        raise InvalidInput(
            f"{name}={value!r}: use UTC time as YYYY-MM-DDTHH:MM:SSZ (e.g. 2026-03-01T09:00:00Z)"
        ) from None
    return value


def ids(values: Any, name: str) -> tuple[int, ...]:
    out = tuple(values)
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in out):
        bad = ", ".join(
            str(v) for v in out if isinstance(v, bool) or not isinstance(v, int) or v < 1
        )
        raise InvalidInput(f"{name} must be positive integer ids, got {bad[:200]}")
    return out


@dataclass(frozen=True)
class FactDraft:
    """A fact to create. It always starts `suspected`; only the lifecycle promotes it."""

    subject: str
    category: str
    value: str
    source_type: str = "stated"
    confidence: float = 0.5
    decay_days: int | None = DEFAULT_DECAY_DAYS
    valid_from: str | None = None  # when it became true; default: when it is recorded

    def __post_init__(self) -> None:
        object.__setattr__(self, "subject", text(self.subject, "subject", MAX_NAME))
        object.__setattr__(self, "category", text(self.category, "category", MAX_NAME))
        object.__setattr__(self, "value", text(self.value, "value", MAX_TEXT))
        choice(self.source_type, "source_type", SOURCE_TYPES)
        if not 0.0 <= float(self.confidence) <= 1.0:
            raise InvalidInput(f"confidence={self.confidence}: use a number from 0 to 1")
        days(self.decay_days)
        stamp(self.valid_from, "valid_from")


@dataclass(frozen=True)
class ObservationDraft:
    """One extracted statement, preference, behaviour or contradiction, tied to its turns."""

    text: str
    session_id: int | None = None
    type: str = "statement"
    topic: str = ""
    about: str = "user"
    turn_ids: tuple[int, ...] = ()
    said_at: str | None = None  # valid time; default: when its earliest turn was said

    def __post_init__(self) -> None:
        stamp(self.said_at, "said_at")
        object.__setattr__(self, "text", text(self.text, "observation text", MAX_TEXT))
        object.__setattr__(self, "topic", text(self.topic, "topic", MAX_NAME, empty=True))
        object.__setattr__(self, "about", text(self.about, "about", MAX_NAME))
        object.__setattr__(self, "turn_ids", ids(self.turn_ids, "turn_ids"))
        choice(self.type, "observation type", OBSERVATION_TYPES)


@dataclass(frozen=True)
class PersonMention:
    """A person named in a conversation; merged into `relationships` by name."""

    name: str
    relation: str = ""
    details: str = ""
    status: str | None = None  # e.g. "dating" → "married"; None keeps the current one
    said_at: str | None = None  # valid time of the mention; default: when it is recorded

    def __post_init__(self) -> None:
        stamp(self.said_at, "said_at")
        object.__setattr__(self, "name", text(self.name, "name", MAX_NAME))
        object.__setattr__(self, "relation", text(self.relation, "relation", MAX_NAME, empty=True))
        object.__setattr__(self, "details", text(self.details, "details", MAX_TEXT, empty=True))
        if self.status is not None:
            object.__setattr__(self, "status", text(self.status, "status", MAX_NAME))


@dataclass(frozen=True)
class EventDraft:
    """A dated happening (a move, a new job, surgery) that expires `decay_days` after its range
    ends. The range is valid time (`valid_from`–`valid_to`, default: the moment it is recorded);
    `said_at` is when it was mentioned and `phrase` the time expression it was said with."""

    title: str
    details: str = ""
    importance: int = 3
    decay_days: int | None = 30
    valid_from: str | None = None
    valid_to: str | None = None
    said_at: str | None = None
    phrase: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "title", text(self.title, "title", MAX_NAME))
        object.__setattr__(self, "details", text(self.details, "details", MAX_TEXT, empty=True))
        if self.importance not in range(1, 6):
            raise InvalidInput(f"importance={self.importance!r}: use 1–5")
        days(self.decay_days)
        for name in ("valid_from", "valid_to", "said_at"):
            stamp(getattr(self, name), name)
        if self.valid_to and self.valid_from and self.valid_to < self.valid_from:
            raise InvalidInput(f"event {self.title!r}: valid_to is before valid_from")
        object.__setattr__(self, "phrase", text(self.phrase, "phrase", MAX_NAME, empty=True))
