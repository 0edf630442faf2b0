"""A real agent database (memory + profile migrations) with a settable clock."""

from __future__ import annotations

import datetime as dt

import pytest

from tideline.app import memory_policies
from tideline.clock import ManualClock as Clock  # the tests' name for the moved-by-hand clock
from tideline.config import DEFAULTS
from tideline.memory import AGENT_MIGRATIONS, Memory
from tideline.profile import PROFILE_MIGRATIONS, FactDraft, Profile
from tideline.store import Storage

T0 = dt.datetime(2026, 1, 1, 9, 0, tzinfo=dt.UTC)


@pytest.fixture
def agent_db(storage: Storage) -> Storage:
    """The test's engine (tests/conftest.py: `engines`), with memory's and the profile's tables."""
    for migrations in (AGENT_MIGRATIONS, PROFILE_MIGRATIONS):
        migrations.apply(storage)
    return storage


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def memory(agent_db: Storage, clock: Clock) -> Memory:
    """Memory on the profile's clock: a turn said "now" is said at the clock's time."""
    return Memory(agent_db, None, **memory_policies(DEFAULTS), clock=clock)


@pytest.fixture
def profile(agent_db: Storage, memory: Memory, clock: Clock) -> Profile:
    return Profile(agent_db, memory, clock=clock)


def add_fact(profile: Profile, value: str = "lives in Tokyo", **kw: object) -> int:
    """Create one suspected fact through a changeset, as the pipeline would."""
    fields: dict[str, object] = {"subject": "user", "category": "city", "value": value} | kw
    turn_ids = tuple(fields.pop("turn_ids", ()))  # type: ignore[call-overload]
    supersedes = fields.pop("supersedes", None)
    cs = profile.read().changeset()
    ref = cs.add_fact(FactDraft(**fields), turn_ids=turn_ids, supersedes=supersedes)  # type: ignore[arg-type]
    return profile.apply(cs).ids[ref]


def move(profile: Profile, fact_id: int, *statuses: str) -> None:
    """Walk a fact through statuses, one applied changeset each."""
    for status in statuses:
        cs = profile.read().changeset()
        cs.transition(fact_id, status, why="test")
        profile.apply(cs)


def rebuild_snapshot(profile: Profile) -> None:
    """What Sleep's step 13 does: the snapshot rendered from the profile as it stands."""
    cs = profile.read().changeset()
    cs.rebuild_snapshot()
    profile.apply(cs)
