"""A person's correction takes effect at once: `reject` and `close` rebuild the snapshot (T0) in
the same transaction, and the snapshot text holds only words and real ids."""

from __future__ import annotations

import pytest

from tideline.memory import Memory
from tideline.profile import EventDraft, FactDraft, PersonMention, Profile, Snapshot

from .conftest import add_fact, rebuild_snapshot

pytestmark = pytest.mark.engines


def rebuild(profile: Profile) -> Snapshot:
    rebuild_snapshot(profile)
    snap = profile.snapshot()
    assert snap is not None
    return snap


@pytest.mark.parametrize("correction", ["reject", "close"])
def test_a_correction_leaves_the_snapshot_in_the_same_transaction(
    profile: Profile, memory: Memory, correction: str
) -> None:
    turn = memory.sync_turn("s1", "user", "I live in Tokyo and work as a nurse.").id
    tokyo = add_fact(profile, "lives in Tokyo", turn_ids=(turn,))
    nurse = add_fact(profile, "works as a nurse", category="job", turn_ids=(turn,))
    before = rebuild(profile)
    assert "lives in Tokyo" in before.text and "works as a nurse" in before.text
    version, snapshots = profile.version(), profile.counts()["snapshots"]

    if correction == "reject":
        fact = profile.reject(tokyo, "I never lived there")
    else:
        fact = profile.close(tokyo, why="moved away")

    after = profile.snapshot()
    assert after is not None and after.id != before.id
    assert "lives in Tokyo" not in after.text and "works as a nurse" in after.text
    assert [f["id"] for f in after.data["facts"]] == [nurse]
    assert after.run_id is None and after.made_at == fact.valid_to  # made by the correction
    # one transaction: one version step, one new snapshot row, nothing else rebuilt twice
    assert profile.version() == version + 1
    assert profile.counts()["snapshots"] == snapshots + 1


def test_the_snapshot_text_names_anchors_by_their_facts_and_lists_in_words(
    profile: Profile, memory: Memory
) -> None:
    turn = memory.sync_turn("s1", "user", "Swedish is my mother tongue; I'm moving soon.").id
    cs = profile.read().changeset()
    lang = cs.add_fact(
        FactDraft("user", "language", "native Swedish", decay_days=None), turn_ids=(turn,)
    )
    cs.mention(PersonMention("Mia", "sister", "bakes bread"))
    cs.add_event(EventDraft("moving to Lisbon", "in the spring", decay_days=None))
    cs.set_trajectory(
        phase="before a move",
        anchors=[lang],
        unstable_areas=["home", "work"],
        momentum="packing",
    )
    cs.rebuild_snapshot()
    applied = profile.apply(cs)
    snap = profile.snapshot()
    assert snap is not None

    trajectory = snap.text.split("## Trajectory\n", 1)[1]
    assert "anchors: language: native Swedish" in trajectory
    assert "unstable areas: home; work" in trajectory
    assert "[" not in trajectory and "'" not in trajectory  # no list or id leaks
    assert "- Mia — sister: bakes bread (1× mentioned)" in snap.text
    assert "- moving to Lisbon: in the spring" in snap.text
    assert snap.data["trajectory"]["anchors"] == [applied.ids[lang]]  # real ids in the JSON
    assert snap.data["relationships"][0]["id"] == profile.relationships()[0].id
