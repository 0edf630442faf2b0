"""A person's correction takes effect at once: `reject` and `close` rebuild the snapshot (T0) in
the same transaction, and the snapshot text holds only words and real ids."""

from __future__ import annotations

import pytest

from tideline.clock import system_clock
from tideline.memory import AGENT_MIGRATIONS, Memory
from tideline.profile import (
    PROFILE_MIGRATIONS,
    EventDraft,
    FactDraft,
    PersonMention,
    Profile,
    Snapshot,
)
from tideline.store import Migrations, Storage

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


def test_a_correction_ends_the_questions_about_its_fact(profile: Profile, memory: Memory) -> None:
    turn = memory.sync_turn("s1", "user", "I live in Tokyo.").id
    tokyo = add_fact(profile, "lives in Tokyo", turn_ids=(turn,))
    cs = profile.read().changeset()
    cs.add_strategy("probe", tokyo, "Is Tokyo home for good?")
    cs.add_strategy("clarify", None, "Do you like big cities?")
    profile.apply(cs)
    assert len(profile.questions()) == 2
    version = profile.version()

    profile.reject(tokyo, "never lived there")

    [probe] = profile.strategies(status="resolved")
    assert (probe.outcome, probe.resolved_why) == (
        "obsolete",
        f"fact #{tokyo} rejected: never lived there",
    )
    assert probe.resolved_at == profile.fact(tokyo).valid_to and profile.version() == version + 1
    assert [q.question for q in profile.questions()] == ["Do you like big cities?"]


def test_the_migration_ends_old_questions_about_retired_facts(storage: Storage) -> None:
    """A database from before strategy outcomes: an open probe about a rejected fact."""
    from tideline.profile._profile_migrations import _digests_and_fact_index, _profile_tables

    old = Migrations("profile")
    old.step(1)(_profile_tables)
    old.step(2)(_digests_and_fact_index)
    AGENT_MIGRATIONS.apply(storage)
    old.apply(storage)
    then = "2025-06-01T10:00:00Z"
    with storage.transaction():
        for fid, status in ((1, "rejected"), (2, "suspected")):
            storage.execute(
                "INSERT INTO facts(id, subject, category, value, status, confidence, source_type,"
                " valid_from, valid_to, last_seen_at, created_at, updated_at, rejected_why)"
                " VALUES (?, 'user', 'city', ?, ?, 0.5, 'stated', ?, ?, ?, ?, ?, ?)",
                (fid, f"city {fid}", status, then, then if fid == 1 else None, then, then, then,
                 "wrong" if fid == 1 else None),
            )  # fmt: skip
            storage.execute(
                "INSERT INTO strategies(kind, fact_id, question, created_at, updated_at)"
                " VALUES ('probe', ?, 'still?', ?, ?)",
                (fid, then, then),
            )

    assert 4 in PROFILE_MIGRATIONS.apply(storage)

    profile = Profile(storage, clock=system_clock)
    [gone] = profile.strategies(status="resolved")
    assert (gone.fact_id, gone.outcome, gone.resolved_why, gone.resolved_at) == (
        1,
        "obsolete",
        "fact #1 rejected: wrong",
        then,
    )
    assert [s.fact_id for s in profile.strategies()] == [2]
