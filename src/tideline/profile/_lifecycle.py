"""Which status changes a fact (and a strategy) may make. Pure rules, no SQL.

    suspected ──▶ confirmed ──▶ established
        │             │              │
        ├─────────────┴──────────────┴──▶ rejected   (wrong: marked by a person or arbitration)
        └─────────────┴──────────────┴──▶ closed     (no longer true: superseded, expired, merged)

Rejected and closed are final: the row stays with its end time, and a changed truth is recorded
as a new fact (that `supersedes` the old one), never by editing or reopening the old row.
"""

from __future__ import annotations

from dataclasses import dataclass

from tideline.clock import days_between, from_text
from tideline.errors import ConfigError, IllegalTransition
from tideline.profile._records import FINAL_STATUSES, STATUSES, Fact, Strategy

FACT_NEXT: dict[str, tuple[str, ...]] = {
    "suspected": ("confirmed", "rejected", "closed"),
    "confirmed": ("established", "rejected", "closed"),
    "established": ("rejected", "closed"),
    "rejected": (),
    "closed": (),
}
STRATEGY_NEXT: dict[str, tuple[str, ...]] = {
    "open": ("asked", "resolved"),
    "asked": ("resolved",),
    "resolved": (),
}
FAST_PATH_MENTIONS = 2  # seed step 5: stated and mentioned at least twice → confirmed
STRATEGY_DAYS = 90  # a question nobody answered in this many days expires


@dataclass(frozen=True)
class Rules:
    """The lifecycle's numbers; the last three are settings (`profile_*`, docs/profile.md).

    - confirmed: consistent in `confirm_sessions` sessions (the seed's 2+), never on the word
      of the one conversation that created it;
    - established: confirmed, backed by `established_sessions` sessions whose words span
      `established_days` days of valid time, and not disputed;
    - a strategy nobody answered in `strategy_days` days of valid time expires.
    """

    confirm_sessions: int = 2
    established_sessions: int = 3
    established_days: float = 90.0
    strategy_days: float = STRATEGY_DAYS

    def __post_init__(self) -> None:
        if not self.confirm_sessions <= self.established_sessions <= 10_000:
            raise ConfigError(
                f"profile_established_sessions={self.established_sessions}: use a whole number "
                f"from {self.confirm_sessions} (what confirms a fact) to 10000"
            )
        for name in ("established_days", "strategy_days"):
            days = getattr(self, name)
            if not 0 <= days <= 36_500:
                raise ConfigError(f"profile_{name}={days}: use a number of days from 0 to 36500")


RULES = Rules()


def check_transition(fact: Fact, to: str) -> None:
    """Refuse, in one line, any change the lifecycle diagram does not draw."""
    if to not in STATUSES:
        raise IllegalTransition(
            f"fact #{fact.id}: unknown status {to!r}; use {', '.join(STATUSES)}"
        )
    if to == fact.status:
        raise IllegalTransition(f"fact #{fact.id} is already {to}; nothing to change")
    if fact.status in FINAL_STATUSES:
        raise IllegalTransition(
            f"fact #{fact.id} is {fact.status}, which is final; record a new fact instead of "
            "reopening it"
        )
    if to not in FACT_NEXT[fact.status]:
        raise IllegalTransition(
            f"fact #{fact.id} cannot go {fact.status} → {to}; from {fact.status} it may become "
            f"{' or '.join(FACT_NEXT[fact.status])}"
        )


def check_live(fact: Fact, action: str = "be superseded") -> None:
    """Only a fact still believed can be superseded, gain evidence or join the graph."""
    if fact.status in FINAL_STATUSES:
        raise IllegalTransition(
            f"fact #{fact.id} is {fact.status}; only suspected, confirmed or established facts can "
            f"{action}"
        )


def check_strategy(strategy: Strategy, to: str) -> None:
    if to not in STRATEGY_NEXT.get(strategy.status, ()):
        allowed = " or ".join(STRATEGY_NEXT.get(strategy.status, ())) or "nothing (final)"
        raise IllegalTransition(
            f"strategy #{strategy.id} cannot go {strategy.status} → {to}; it may become {allowed}"
        )


def confirmable(fact: Fact, rules: Rules = RULES) -> bool:
    """Suspected, and consistent in enough sessions to be confirmed (by rule or by the LLM)."""
    return fact.status == "suspected" and fact.sessions >= rules.confirm_sessions


def fast_path(fact: Fact, rules: Rules = RULES) -> bool:
    """Seed step 5's rule: a stated fact heard twice, in two sessions or more, is confirmed
    without asking the LLM."""
    return (
        confirmable(fact, rules)
        and fact.source_type == "stated"
        and fact.mention_count >= FAST_PATH_MENTIONS
    )


def span_days(fact: Fact) -> float:
    """Days of valid time between the first and the latest words backing the fact."""
    if fact.said_from is None or fact.said_to is None:
        return 0.0
    return days_between(from_text(fact.said_from), from_text(fact.said_to))


@dataclass(frozen=True)
class Met:
    """When (valid time) a rule counting sessions was met, and what backed the fact then."""

    at: str
    sessions: int
    days: float

    def __str__(self) -> str:
        return f"backed by {self.sessions} sessions over {self.days:.0f} days"


def rule_met(fact: Fact, sessions: int, days: float = 0.0) -> Met:
    """When the fact was first backed by `sessions` sessions whose words span `days` days: the
    earliest of its sessions' starts (and its latest words) at which both held — else, its
    sessions' times unknown, its latest words. A promotion is dated then, not when a run
    noticed, so replaying a history night by night dates (and explains) it the same."""
    starts = fact.session_starts
    if fact.said_from is not None and len(starts) >= sessions:
        first = from_text(fact.said_from)
        for t in sorted({*starts, *([fact.said_to] if fact.said_to else [])}):
            n, span = sum(s <= t for s in starts), days_between(first, from_text(t))
            if n >= sessions and span >= days:
                return Met(t, n, span)
    return Met(fact.said_to or fact.last_seen_at, fact.sessions, span_days(fact))


def establishable(fact: Fact, rules: Rules = RULES) -> bool:
    """Long-standing and well-evidenced: the rule that promotes confirmed → established."""
    return (
        fact.status == "confirmed"
        and not fact.disputed_by
        and fact.sessions >= rules.established_sessions
        and span_days(fact) >= rules.established_days
    )
