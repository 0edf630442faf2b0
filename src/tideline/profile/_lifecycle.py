"""Which status changes a fact (and a strategy) may make. Pure rules, no SQL.

    suspected ──▶ confirmed ──▶ established
        │             │              │
        ├─────────────┴──────────────┴──▶ rejected   (wrong: marked by a person or arbitration)
        └─────────────┴──────────────┴──▶ closed     (no longer true: superseded, expired, merged)

Rejected and closed are final: the row stays with its end time, and a changed truth is recorded
as a new fact (that `supersedes` the old one), never by editing or reopening the old row.
"""

from __future__ import annotations

from tideline.profile._errors import IllegalTransition
from tideline.profile._types import FINAL_STATUSES, STATUSES, Fact, Strategy

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


def fast_path(fact: Fact) -> bool:
    """Seed step 5's rule: a stated fact heard twice is confirmed without asking the LLM."""
    return (
        fact.status == "suspected"
        and fact.source_type == "stated"
        and fact.mention_count >= FAST_PATH_MENTIONS
    )
