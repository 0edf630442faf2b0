""" "Lives in Tokyo" then "moved to Osaka": a supersedes link, a disputed pair, then arbitration."""

from __future__ import annotations

import pytest

from tideline.profile import FactDraft, IllegalTransition, Profile, settle

from .conftest import add_fact

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def tokyo_then_osaka(profile: Profile, memory, clock) -> tuple[int, int]:
    t1 = memory.sync_turn("s1", "user", "I live in Tokyo", timestamp="2026-01-01T09:00:00Z").id
    tokyo = add_fact(profile, "Tokyo", turn_ids=(t1,))
    clock.advance(days=40)
    t2 = memory.sync_turn("s2", "user", "We moved to Osaka last week").id
    office = add_fact(profile, "Umeda office", category="job")
    cs = profile.read().changeset()
    cs.add_edge("related_to", tokyo, office)
    profile.apply(cs)
    cs = profile.read().changeset()
    osaka_ref = cs.add_fact(
        FactDraft("user", "city", "Osaka", valid_from="2026-02-03T09:00:00Z"),
        turn_ids=(t2,),
        supersedes=tokyo,
    )
    cs.add_edge("causes", osaka_ref, office)
    osaka = profile.apply(cs).ids[osaka_ref]
    return tokyo, osaka


def test_supersedes_forms_a_disputed_pair(profile: Profile, memory, clock) -> None:
    tokyo, osaka = tokyo_then_osaka(profile, memory, clock)
    [pair] = profile.read().disputed_pairs()
    assert (pair.old.id, pair.new.id) == (tokyo, osaka)
    assert pair.old.value == "Tokyo" and pair.new.value == "Osaka"


def test_accept_new_closes_the_old_fact_with_its_end_time(profile: Profile, memory, clock) -> None:
    tokyo, osaka = tokyo_then_osaka(profile, memory, clock)
    before = profile.counts()
    view = profile.read()
    cs = view.changeset()
    settle(cs, view.disputed_pairs()[0], accept_new=True, why="the user said they moved")
    profile.apply(cs)

    old = profile.fact(tokyo)
    assert (old.status, old.valid_to) == ("closed", "2026-02-03T09:00:00Z")
    assert old.evidence[0].text == "I live in Tokyo"  # still traceable to its turn
    assert profile.fact(osaka).status == "suspected"
    assert profile.read().disputed_pairs() == []
    assert profile.edges(fact_id=tokyo) == []  # the loser's edges are retired ...
    retired = profile.edges(fact_id=tokyo, live=False)
    # ... not deleted: the link ended when Tokyo did (valid time), removed when settled (record)
    assert [(e.valid_to, e.removed_at) for e in retired] == [
        ("2026-02-03T09:00:00Z", "2026-02-10T09:00:00Z")
    ]
    assert len(profile.edges(fact_id=osaka)) == 1
    assert profile.counts()["facts"] == before["facts"]
    assert profile.counts()["edges"] == before["edges"]

    timeline = profile.timeline(osaka)
    assert [f.value for f in timeline.chain] == ["Tokyo", "Osaka"]
    # by valid time (when each change took effect), with the record time beside it
    changes = [(c.fact_id, c.to_status, c.at, c.recorded_at) for c in timeline.changes]
    assert changes == [
        (tokyo, "suspected", "2026-01-01T09:00:00Z", "2026-01-01T09:00:00Z"),
        (osaka, "suspected", "2026-02-03T09:00:00Z", "2026-02-10T09:00:00Z"),
        (tokyo, "closed", "2026-02-03T09:00:00Z", "2026-02-10T09:00:00Z"),
    ]
    assert profile.timeline(tokyo).chain == timeline.chain


def test_reject_new_keeps_the_old_fact(profile: Profile, memory, clock) -> None:
    tokyo, osaka = tokyo_then_osaka(profile, memory, clock)
    view = profile.read()
    cs = view.changeset()
    settle(cs, view.disputed_pairs()[0], accept_new=False, why="it was a hypothetical")
    profile.apply(cs)
    assert profile.fact(tokyo).status == "suspected"
    rejected = profile.fact(osaka)
    assert rejected.status == "rejected" and "hypothetical" in (rejected.rejected_why or "")
    assert profile.edges(fact_id=osaka) == []


def test_a_closed_fact_cannot_be_superseded(profile: Profile) -> None:
    tokyo = add_fact(profile, "Tokyo")
    profile.close(tokyo)
    with pytest.raises(IllegalTransition, match="only suspected, confirmed or established"):
        add_fact(profile, "Osaka", supersedes=tokyo)
