"""Profile migration 3 (two clocks) on a database the old code wrote, on both engines.

Before it, every time was the processing time: an imported May 2023 conversation slept on in
November 2026 left facts "valid from" 2026, and a closed fact ending 13 s before its successor
began. The migration adds the record-time and valid-time columns and backfills valid time from
the evidence turns' own timestamps; the old times become record times.
"""

from __future__ import annotations

import pytest

from tideline.app import memory_policies
from tideline.clock import system_clock
from tideline.config import DEFAULTS
from tideline.memory import AGENT_MIGRATIONS, Memory
from tideline.profile import PROFILE_MIGRATIONS, Profile
from tideline.profile._profile_migrations import _digests_and_fact_index, _profile_tables
from tideline.store import Migrations, Storage

pytestmark = pytest.mark.engines

MAY, JUNE = "2023-05-08T13:56:00Z", "2023-06-09T19:55:00Z"
RUN, APPLIED = "2026-11-30T10:00:00Z", "2026-11-30T10:00:13Z"  # when the old Sleep ran


def old_database(storage: Storage) -> None:
    """The profile as the code before migration 3 wrote it (migrations 1–2, processing times)."""
    old = Migrations("profile")
    old.step(1)(_profile_tables)
    old.step(2)(_digests_and_fact_index)
    AGENT_MIGRATIONS.apply(storage)
    old.apply(storage)
    memory = Memory(storage, None, **memory_policies(DEFAULTS), clock=system_clock)
    t1 = memory.sync_turn("s1", "user", "I'm researching adoption agencies.", timestamp=MAY).id
    t2 = memory.sync_turn("s2", "user", "I applied to adopt a child!", timestamp=JUNE).id
    sql = storage.execute
    with storage.transaction():
        sql(
            "INSERT INTO observations(id, session_id, turn_ids, type, text, processed, created_at)"
            " VALUES (1, 1, ?, 'statement', 'Caroline researches adoption', 1, ?)",
            (f"[{t1}]", RUN),
        )
        facts = (
            (1, "researching adoption", "closed", None, APPLIED, RUN),
            (2, "applied to adopt", "suspected", 1, None, APPLIED),
        )
        for fid, value, status, supersedes, valid_to, start in facts:
            sql(
                "INSERT INTO facts(id, subject, category, value, status, confidence, source_type,"
                " mention_count, decay_days, expires_at, valid_from, valid_to, supersedes,"
                " last_seen_at, created_at, updated_at) VALUES (?, 'user', 'adoption', ?, ?, 0.5,"
                " 'stated', 1, 365, '2027-11-30T10:00:00Z', ?, ?, ?, ?, ?, ?)",
                (fid, value, status, start, valid_to, supersedes, start, start, APPLIED),
            )
        for fid, turn, obs in ((1, t1, 1), (2, t2, None)):
            sql(
                "INSERT INTO fact_evidence(fact_id, turn_id, observation_id, polarity, created_at)"
                " VALUES (?, ?, ?, 'support', ?)",
                (fid, turn, obs, RUN),
            )
        changes = (
            (1, None, "suspected", RUN, None),
            (2, None, "suspected", APPLIED, None),
            (1, "suspected", "closed", RUN, "superseded by #2: applied"),
        )
        for fid, was, to, at, why in changes:
            sql(
                "INSERT INTO fact_changes(fact_id, from_status, to_status, at, why)"
                " VALUES (?, ?, ?, ?, ?)",
                (fid, was, to, at, why),
            )
        sql(
            "INSERT INTO events(title, importance, decay_days, happened_at, expires_at,"
            " created_at) VALUES ('applied to adopt', 4, 60, ?, '2023-08-08T19:55:00Z', ?)",
            (JUNE, RUN),
        )
        sql(
            "INSERT INTO strategies(kind, fact_id, question, created_at, updated_at)"
            " VALUES ('probe', 2, 'Is the application settled?', ?, ?)",
            (APPLIED, APPLIED),
        )
        sql(
            "INSERT INTO session_digests(session_id, through_turn_id, summary, made_at)"
            " VALUES (2, ?, 'applied to adopt', ?)",
            (t2, APPLIED),
        )
        sql("INSERT INTO trajectory(phase, made_at) VALUES ('adopting', ?)", (APPLIED,))


def test_migration_3_backfills_valid_time_from_the_evidence(storage: Storage) -> None:
    old_database(storage)
    assert PROFILE_MIGRATIONS.apply(storage)[0] == 3  # and any later ones
    profile = Profile(
        storage,
        Memory(storage, None, **memory_policies(DEFAULTS), clock=system_clock),
        clock=system_clock,
    )

    researching, applied = profile.fact(1), profile.fact(2)
    assert (researching.valid_from, researching.last_seen_at) == (MAY, MAY)
    assert applied.valid_from == JUNE
    assert researching.valid_to == applied.valid_from  # ends when its successor began
    assert researching.expires_at == "2024-05-07T13:56:00Z"  # 365 days after it was said
    assert (researching.created_at, researching.retired_at) == (RUN, APPLIED)  # record time
    assert [e.said_at for e in researching.evidence] == [MAY]
    [obs] = profile.observations()
    assert (obs.said_at, obs.created_at) == (MAY, RUN)
    changes = [(c.fact_id, c.to_status, c.at, c.recorded_at) for c in profile.timeline(2).changes]
    assert changes == [
        (1, "suspected", MAY, RUN),
        (2, "suspected", JUNE, APPLIED),
        (1, "closed", JUNE, RUN),
    ]
    [event] = profile.events(active=None)
    assert (event.valid_from, event.valid_to, event.said_at) == (JUNE, JUNE, JUNE)
    [probe] = profile.strategies()
    assert (probe.valid_from, probe.created_at) == (JUNE, APPLIED)
    [digest] = profile.digests()
    assert (digest.valid_from, digest.valid_to, digest.made_at) == (JUNE, JUNE, APPLIED)
    trajectory = profile.trajectory()
    assert trajectory is not None and trajectory.valid_at == APPLIED
    assert PROFILE_MIGRATIONS.pending(storage) == []
