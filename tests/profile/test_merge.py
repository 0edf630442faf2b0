"""Relationships merged by mention, and duplicate facts merged into one (none deleted)."""

from __future__ import annotations

import pytest

from tideline.profile import PersonMention, Profile, fact_key, plan_dedupe

from .conftest import add_fact

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def mention(profile: Profile, *people: PersonMention) -> None:
    cs = profile.read().changeset()
    for p in people:
        cs.mention(p)
    profile.apply(cs)


def test_a_person_mentioned_again_is_merged(profile: Profile, clock) -> None:
    mention(profile, PersonMention("Aiko", "girlfriend", "works at a bakery", status="dating"))
    clock.advance(days=10)
    mention(profile, PersonMention("  aiko ", "", "works at a bakery; loves hiking"))
    clock.advance(days=200)
    mention(profile, PersonMention("AIKO", "wife", "", status="married"))

    [aiko] = profile.relationships()
    assert aiko.name == "Aiko"  # the first spelling stays
    assert aiko.mention_count == 3
    assert aiko.relation == "wife"
    assert aiko.details == "works at a bakery; loves hiking"
    assert aiko.status == "married"
    assert aiko.history == [
        {"status": "dating", "at": "2026-01-01T09:00:00Z", "recorded_at": "2026-01-01T09:00:00Z"},
        {
            "status": "married",
            "at": "2026-07-30T09:00:00Z",
            "recorded_at": "2026-07-30T09:00:00Z",
            "was": "dating",
        },
    ]
    assert (aiko.first_seen_at, aiko.last_seen_at) == (
        "2026-01-01T09:00:00Z",
        "2026-07-30T09:00:00Z",
    )
    assert profile.counts()["relationships"] == 1


def test_a_mention_heard_late_widens_the_seen_times_in_valid_time(profile: Profile, clock) -> None:
    """A session imported later but said earlier moves first-seen back; never last-seen in."""
    mention(profile, PersonMention("Aiko", "sister", said_at="2025-06-01T10:00:00Z"))
    clock.advance(days=3)
    mention(profile, PersonMention("Aiko", "", "moved to Kyoto", said_at="2024-03-05T10:00:00Z"))
    [aiko] = profile.relationships()
    assert (aiko.first_seen_at, aiko.last_seen_at) == (
        "2024-03-05T10:00:00Z",
        "2025-06-01T10:00:00Z",
    )
    assert (aiko.created_at, aiko.updated_at) == ("2026-01-01T09:00:00Z", "2026-01-04T09:00:00Z")


def test_people_with_different_names_stay_apart(profile: Profile) -> None:
    mention(profile, PersonMention("Aiko", "wife"), PersonMention("Ken", "brother"))
    assert sorted(r.name for r in profile.relationships()) == ["Aiko", "Ken"]


def test_identical_facts_are_merged_into_one(profile: Profile, memory) -> None:
    turns = [memory.sync_turn("s", "user", f"turn {i}").id for i in range(3)]
    a = add_fact(profile, "Lives in  Tokyo.", turn_ids=(turns[0],))
    b = add_fact(profile, "lives in tokyo", turn_ids=(turns[1], turns[2]))
    c = add_fact(profile, "lives in Kyoto")
    cs = profile.read().changeset()
    cs.confirm(a)
    profile.apply(cs)
    before = profile.counts()

    view = profile.read()
    assert fact_key(profile.fact(a)) == fact_key(profile.fact(b))
    cs = view.changeset()
    assert plan_dedupe(view.facts, cs) == [b]  # keep the confirmed one
    profile.apply(cs)

    kept, dropped = profile.fact(a), profile.fact(b)
    assert sorted(e.turn_id for e in kept.evidence) == turns
    assert kept.mention_count == 2 and kept.status == "confirmed"
    assert (dropped.status, dropped.merged_into) == ("closed", a)
    assert dropped.valid_to is not None and len(dropped.evidence) == 2  # kept, not moved away
    assert profile.fact(c).status == "suspected"
    after = profile.counts()
    assert after["facts"] == before["facts"]
    assert after["fact_evidence"] == before["fact_evidence"] + 2

    view = profile.read()
    assert plan_dedupe(view.facts, view.changeset()) == []
