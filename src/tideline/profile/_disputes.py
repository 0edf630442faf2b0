"""Disputed pairs (seed steps 4 and 6). Pure rules, no SQL.

A new fact that `supersedes` an old one while both are still live is a disputed pair. Arbitration
either accepts the new fact — the old one is closed with its end time set to when the new one
began — or rejects the new statement. Closing or rejecting retires the loser's edges (in apply).
An established fact contradicted once is disputed, not closed, until a second session backs the
new fact (`may_close`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tideline.profile._changeset import Because, Changeset
from tideline.profile._lifecycle import RULES, Rules
from tideline.profile._records import ACTIVE_STATUSES, Fact


@dataclass(frozen=True)
class DisputedPair:
    old: Fact
    new: Fact


def disputed_pairs(facts: list[Fact]) -> list[DisputedPair]:
    by_id = {f.id: f for f in facts}
    pairs = []
    for new in facts:
        old = by_id.get(new.supersedes) if new.supersedes is not None else None
        if old is not None and old.status in ACTIVE_STATUSES and new.status in ACTIVE_STATUSES:
            pairs.append(DisputedPair(old, new))
    return pairs


def may_close(pair: DisputedPair, rules: Rules = RULES) -> bool:
    """An established fact is not overturned on one conversation's word: accepting the new
    fact closes it only once the new fact is backed by `confirm_sessions` sessions (a second
    session agrees). Until then the pair stays disputed, the old fact live."""
    return pair.old.status != "established" or pair.new.sessions >= rules.confirm_sessions


def settle(changeset: Changeset, pair: DisputedPair, *, accept_new: bool, why: str) -> None:
    """Record the arbitration: accept_new closes the old fact, reject_new rejects the new one."""
    if accept_new:
        changeset.close(
            pair.old.id,
            why=why,
            at=pair.new.valid_from,
            because=Because("superseded by", pair.new.id),
        )
    else:
        changeset.reject(pair.new.id, why, because=Because("arbitration kept", pair.old.id))
