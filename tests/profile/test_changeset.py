"""Changesets: computed against a read, applied whole in one transaction, or refused whole."""

from __future__ import annotations

import pytest

from tideline.app import Tideline
from tideline.clock import system_clock
from tideline.errors import InvalidInput, NotFound
from tideline.profile import (
    EventDraft,
    FactDraft,
    IllegalTransition,
    ObservationDraft,
    PersonMention,
    Profile,
    ProfileChanged,
)

from .conftest import add_fact

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


def full_changeset(profile: Profile, turn: int):  # type: ignore[no-untyped-def]
    cs = profile.read().changeset()
    obs = cs.add_observation(
        ObservationDraft("User lives in Tokyo", session_id=1, topic="home", turn_ids=(turn,))
    )
    city = cs.add_fact(FactDraft("user", "city", "Tokyo"), turn_ids=(turn,), observation=obs)
    job = cs.add_fact(FactDraft("user", "job", "engineer", source_type="inferred"))
    cs.add_edge("related_to", city, job)
    cs.add_strategy("probe", job, "What do you work on these days?")
    cs.mention(PersonMention("Ken", "brother"))
    cs.add_event(EventDraft("moved house", importance=4))
    cs.observations_processed([obs])
    cs.set_user_model("formality", "casual", ("turn 1",))
    cs.set_trajectory(phase="settling in", anchors=[1], momentum="steady")
    cs.snapshot("User: engineer in Tokyo.", {"facts": 2})
    cs.session_processed(1, turn)
    return cs


def test_a_changeset_applies_every_kind_of_change(profile: Profile, memory) -> None:
    turn = memory.sync_turn("s1", "user", "I'm an engineer in Tokyo").id
    cs = full_changeset(profile, turn)
    assert cs.plan()["NewFact"] == 2 and len(cs) == 12
    applied = profile.apply(cs)
    assert applied.version == 1 and profile.version() == 1
    assert sum(applied.counts.values()) == 12

    city = profile.facts(category="city")[0]
    [evidence] = city.evidence  # one link: the turn, through the observation made of it
    assert (evidence.turn_id, evidence.text) == (turn, "I'm an engineer in Tokyo")
    assert evidence.observation_id == profile.observations()[0].id
    assert profile.observations(processed=True)[0].turn_ids == [turn]
    assert profile.edges()[0].kind == "related_to"
    assert profile.strategies()[0].kind == "probe"
    assert profile.relationships()[0].name == "Ken"
    assert profile.events()[0].title == "moved house"
    assert profile.user_model()[0].value == "casual"
    trajectory = profile.trajectory()
    assert trajectory is not None and trajectory.anchor_fact_ids == {1}
    snapshot = profile.snapshot()
    assert snapshot is not None and snapshot.data == {"facts": 2}
    assert profile.read().processed == {1: turn}


def test_placeholder_ids_are_named_in_a_models_words_only(profile: Profile) -> None:
    """A reason or trajectory citing `fact -1` gets the id; a user's own value that happens to
    read like one (a snapshot's data) is kept as said."""
    cs = profile.read().changeset()
    ref = cs.add_fact(FactDraft("user", "home", "room #-1 at the hostel"))
    cs.set_trajectory(phase="settling in, see #-1", anchors=[ref])
    cs.snapshot("home", {"facts": [{"id": ref, "value": "room #-1 at the hostel"}]})
    fid = profile.apply(cs).ids[ref]
    trajectory = profile.trajectory()
    assert trajectory is not None and trajectory.phase == f"settling in, see #{fid}"
    snapshot = profile.snapshot()
    assert snapshot is not None
    assert snapshot.data == {"facts": [{"id": fid, "value": "room #-1 at the hostel"}]}


def test_a_wrong_argument_is_named_in_words_not_a_python_list(profile: Profile) -> None:
    cs = profile.read().changeset()
    with pytest.raises(InvalidInput) as bad:
        cs.set_trajectory(phase="x", mood="sunny")
    assert str(bad.value) == (
        "trajectory: unknown field(s) mood; "
        "use anchors, direction, momentum, phase, stability, unstable_areas"
    )
    with pytest.raises(InvalidInput) as bad:
        cs.add_fact(FactDraft("user", "city", "Tokyo"), turn_ids=(3, -2, 0))
    assert str(bad.value).endswith("must be positive integer ids, got -2, 0")


def test_a_failure_mid_apply_leaves_nothing(profile: Profile, memory) -> None:
    turn = memory.sync_turn("s1", "user", "hello").id
    closed = add_fact(profile, "old")
    profile.close(closed)
    before, version = profile.counts(), profile.version()

    for breaker in (
        lambda cs: cs.transition(closed, "confirmed"),  # illegal transition
        lambda cs: cs.support(999, turn_ids=(turn,)),  # unknown fact
        lambda cs: cs.support(closed, turn_ids=(turn + 100,)),  # unknown turn
    ):
        cs = full_changeset(profile, turn)
        breaker(cs)
        with pytest.raises((IllegalTransition, NotFound)):
            profile.apply(cs)
        assert profile.counts() == before
        assert profile.version() == version


def test_a_changeset_is_refused_when_the_profile_changed_under_it(profile: Profile, memory) -> None:
    fid = add_fact(profile)
    view = profile.read()  # the pipeline reads ...
    cs = view.changeset()
    cs.confirm(fid)
    cs.add_fact(FactDraft("user", "pet", "a cat"))
    memory.sync_turn("s9", "user", "new turns never conflict")  # ... the agent keeps talking ...
    profile.reject(fid, "the user says this is wrong")  # ... and a person corrects the profile
    before = profile.counts()
    with pytest.raises(ProfileChanged, match="read it again") as err:
        profile.apply(cs)
    assert err.value.transient
    assert profile.counts() == before
    assert profile.fact(fid).status == "rejected"


def test_two_changesets_from_one_read_apply_once(profile: Profile) -> None:
    view = profile.read()
    first, second = view.changeset(), view.changeset()
    for cs in (first, second):
        cs.add_fact(FactDraft("user", "pet", "a cat"))
    profile.apply(first)
    with pytest.raises(ProfileChanged):
        profile.apply(second)
    assert len(profile.facts()) == 1


def test_refs_must_exist_before_use(profile: Profile) -> None:
    from tideline.profile import Ref

    cs = profile.read().changeset()
    cs.confirm(Ref("fact", 7))
    with pytest.raises(NotFound, match="ref 7 is used before it is created"):
        profile.apply(cs)


def test_changeset_checks_its_arguments_at_once(profile: Profile) -> None:
    cs = profile.read().changeset()
    with pytest.raises(InvalidInput, match="edge kind"):
        cs.add_edge("likes", 1, 2)
    with pytest.raises(InvalidInput, match="turn_ids and/or an observation"):
        cs.support(1)
    with pytest.raises(InvalidInput, match="strategy kind"):
        cs.add_strategy("nag", None, "?")
    assert len(cs) == 0


def test_sleep_runs_are_recorded_even_when_they_fail(profile: Profile, clock) -> None:
    run = profile.start_run({"extract": "v1"})
    cs = profile.read().changeset()
    cs.transition(12345, "confirmed")
    with pytest.raises(NotFound):
        profile.apply(cs, run_id=run)
    clock.advance(minutes=3)
    done = profile.finish_run(run, "failed", errors=["step 5: fact #12345 does not exist"])
    assert (done.status, done.prompt_versions, done.finished_at) == (
        "failed",
        {"extract": "v1"},
        "2026-01-01T09:03:00Z",
    )
    assert [r.id for r in profile.runs()] == [run]


def test_run_id_is_stamped_on_the_fact_changes(profile: Profile) -> None:
    run = profile.start_run()
    cs = profile.read().changeset()
    ref = cs.add_fact(FactDraft("user", "pet", "a cat"))
    fid = profile.apply(cs, run_id=run).ids[ref]
    assert profile.timeline(fid).changes[0].run_id == run
    profile.finish_run(run, "done", steps=[{"step": 4, "new": 1}], tokens_in=10, version=1)
    assert profile.runs()[0].steps == [{"step": 4, "new": 1}]


def test_the_agent_database_gets_the_profile_tables(settings) -> None:  # type: ignore[no-untyped-def]
    app = Tideline(settings)
    try:
        profile = Profile(app.db, clock=system_clock)
        assert profile.version() == 0
        assert profile.counts()["facts"] == 0
    finally:
        app.close()
