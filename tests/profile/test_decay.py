"""Expiry, the maturity table at each boundary (and anchors −40 %), and injection weight."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from tideline.clock import to_text
from tideline.profile import (
    Fact,
    Profile,
    injection_weight,
    matured_decay,
    plan_expiry,
    plan_maturity,
    thresholds,
)

from .conftest import T0, add_fact

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

BASE = Fact(
    id=1,
    subject="user",
    category="language",
    value="Japanese",
    status="confirmed",
    confidence=0.9,
    source_type="stated",
    mention_count=1,
    decay_days=90,
    expires_at=None,
    valid_from="2026-01-01T09:00:00Z",
    valid_to=None,
    supersedes=None,
    merged_into=None,
    last_seen_at="2026-01-01T09:00:00Z",
    rejected_why=None,
    created_at="2026-01-01T09:00:00Z",
    updated_at="2026-01-01T09:00:00Z",
)


def fact(**kw: object) -> Fact:
    return dataclasses.replace(BASE, **kw)  # type: ignore[arg-type]


# (age in days, seconds added, evidence, anchor) -> new decay: at, just below (age), just below
# (evidence) each threshold
TABLE = [
    (730, 0, 10, False, 730),
    (730, -1, 10, False, 365),
    (730, 0, 9, False, 365),
    (365, 0, 6, False, 365),
    (365, -1, 6, False, 180),
    (365, 0, 5, False, 180),
    (90, 0, 3, False, 180),
    (90, -1, 3, False, None),
    (90, 0, 2, False, None),
    # anchors: every threshold × 0.6 -> 438 d & 6, 219 d & 3.6 (so 4), 54 d & 1.8 (so 2)
    (438, 0, 6, True, 730),
    (438, -1, 6, True, 365),
    (438, 0, 5, True, 365),
    (219, 0, 4, True, 365),
    (219, -1, 4, True, 180),
    (219, 0, 3, True, 180),
    (54, 0, 2, True, 180),
    (54, -1, 2, True, None),
    (54, 0, 1, True, None),
]


@pytest.mark.parametrize(("days", "seconds", "evidence", "anchor", "expected"), TABLE)
def test_maturity_table_at_each_boundary(
    days: int, seconds: int, evidence: int, anchor: bool, expected: int | None
) -> None:
    now = T0 + dt.timedelta(days=days, seconds=seconds)
    heard = fact(evidence_count=evidence, last_seen_at=to_text(now))  # said again just now
    assert matured_decay(heard, now, anchor=anchor) == expected


def test_maturity_is_judged_while_the_fact_lived_not_when_a_run_looks() -> None:
    """Years later, a fact is as mature as it was the last moment it was believed: one old and
    evidenced enough before its expiry earned its longer life (and kept earning while it
    lasted); one that lapsed first did not, however old it would be today."""
    years_later = T0 + dt.timedelta(days=1000)
    # said first on T0, a third time 80 days later: at 90 days old it earned 180 days of life,
    # and lapsed 180 days after that last word — never 365 days old while believed
    earned = fact(evidence_count=3, last_seen_at=to_text(T0 + dt.timedelta(days=80)))
    assert matured_decay(earned, years_later) == 180
    # the same three mentions within its first 10 days: it lapsed at 100 days, 3 mentions,
    # so at 90 days it earned 180, and at 190 days it still had too few for 365
    early = fact(evidence_count=3, last_seen_at=to_text(T0 + dt.timedelta(days=10)))
    assert matured_decay(early, years_later) == 180
    # with only two mentions it lapsed at 90 days unmatured, whatever the date of the run
    assert matured_decay(fact(evidence_count=2), years_later) is None


def test_anchor_thresholds_are_sixty_percent() -> None:
    plain, anchor = thresholds(False), thresholds(True)
    assert [(r.min_age_days, r.min_evidence, r.decay_days) for r in plain] == [
        (730, 10, 730),
        (365, 6, 365),
        (90, 3, 180),
    ]
    assert [(round(r.min_age_days, 6), round(r.min_evidence, 6)) for r in anchor] == [
        (438, 6),
        (219, 3.6),
        (54, 1.8),
    ]


def test_maturity_never_shortens_and_skips_final_facts() -> None:
    now = T0 + dt.timedelta(days=400)
    assert matured_decay(fact(evidence_count=6, decay_days=730), now) is None
    assert matured_decay(fact(evidence_count=6, status="closed"), now) is None
    assert matured_decay(fact(evidence_count=6, decay_days=None), now) is None


def test_injection_weight_fades_near_expiry() -> None:
    f = fact(decay_days=100, expires_at="2026-04-11T09:00:00Z")  # T0 + 100 days
    at = lambda days: injection_weight(f, T0 + dt.timedelta(days=days))  # noqa: E731
    assert at(0) == at(75) == 1.0  # three quarters of its life at full weight
    assert 0.3 < at(90) < at(80) < 1.0
    assert at(100) == 0.0  # expired: out of the profile
    assert at(100 - 1e-6) == pytest.approx(0.3, abs=1e-3)
    assert injection_weight(fact(expires_at=None, decay_days=None), T0) == 1.0
    assert injection_weight(fact(status="rejected"), T0) == 0.0


def test_expiry_closes_at_expires_at_and_asks_to_verify(profile: Profile, clock) -> None:
    fid = add_fact(profile, "works at Acme", category="job", decay_days=30)
    keep = add_fact(profile, "speaks Japanese", category="language", decay_days=None)
    assert profile.fact(fid).expires_at == "2026-01-31T09:00:00Z"
    clock.advance(days=30, seconds=-1)
    view = profile.read()
    assert plan_expiry(view.facts, view.events, view.now, view.changeset()) == []
    assert {a.fact.id for a in profile.active()} == {fid, keep}

    clock.advance(seconds=1)
    assert {a.fact.id for a in profile.active()} == {keep}  # expired: out of the active profile
    view = profile.read()
    cs = view.changeset()
    assert plan_expiry(view.facts, view.events, view.now, cs) == [fid]
    profile.apply(cs)
    closed = profile.fact(fid)
    assert (closed.status, closed.valid_to) == ("closed", "2026-01-31T09:00:00Z")
    [verify] = profile.strategies()
    assert (verify.kind, verify.fact_id, verify.status) == ("verify", fid, "open")
    assert "works at Acme" in verify.question
    assert profile.counts()["facts"] == 2


def test_a_mention_restarts_the_life_of_a_fact(profile: Profile, memory, clock) -> None:
    fid = add_fact(profile, decay_days=30)
    clock.advance(days=20)
    turn = memory.sync_turn("s", "user", "still in Tokyo").id
    cs = profile.read().changeset()
    cs.support(fid, turn_ids=(turn,))
    profile.apply(cs)
    assert profile.fact(fid).expires_at == "2026-02-20T09:00:00Z"


def test_events_expire_without_strategies(profile: Profile, clock) -> None:
    from tideline.profile import EventDraft

    cs = profile.read().changeset()
    cs.add_event(EventDraft("knee surgery", importance=4, decay_days=14))
    profile.apply(cs)
    clock.advance(days=14)
    view = profile.read()
    cs = view.changeset()
    plan_expiry(view.facts, view.events, view.now, cs)
    profile.apply(cs)
    [event] = profile.events(active=None)
    assert (event.status, event.closed_at) == ("closed", "2026-01-15T09:00:00Z")
    assert profile.strategies() == []


def test_maturity_planned_and_applied(profile: Profile, memory, clock) -> None:
    turns = [memory.sync_turn("s", "user", f"I speak Japanese ({i})").id for i in range(4)]
    plain = add_fact(profile, "Japanese", category="language", turn_ids=tuple(turns[:3]))
    anchor = add_fact(profile, "Japanese", category="native language", turn_ids=tuple(turns[:2]))
    cs = profile.read().changeset()
    cs.support(plain, turn_ids=(turns[3],))  # keeps both alive past 90 days
    cs.support(anchor, turn_ids=(turns[3],))
    profile.apply(cs)
    cs = profile.read().changeset()
    cs.set_trajectory(phase="settled", anchors=[{"fact_id": anchor, "why": "mother tongue"}])
    profile.apply(cs)

    clock.advance(days=54)
    view = profile.read()
    assert view.anchors == {anchor}
    cs = view.changeset()
    assert plan_maturity(view.facts, view.now, cs, view.anchors) == [anchor]  # 54 d, 3 ev
    profile.apply(cs)
    matured = profile.fact(anchor)
    assert matured.decay_days == 180
    assert matured.expires_at == "2026-06-30T09:00:00Z"  # last seen at T0 + 180 days
