"""Narratives carry both clocks: `created_at` is valid time (when it happened; a dream's
reflection: the day dreamt of), `recorded_at` / `retired_at` record time (when Tideline wrote it,
and when a correction or forgetting took it out of use). Agent migration 5 adds and backfills
them on a database the old code wrote, on both engines."""

from __future__ import annotations

import datetime as dt

import pytest

from tideline.app import memory_policies
from tideline.clock import ManualClock, system_clock
from tideline.config import DEFAULTS
from tideline.memory import AGENT_MIGRATIONS, Memory
from tideline.memory._agent_migrations import (
    _raw_context_and_narratives,
    _script_layer,
    _tombstones,
    _write_keys,
)
from tideline.store import Migrations, Storage

pytestmark = pytest.mark.engines

DAY = "2023-06-09T12:00:00Z"  # the day a dream was about (valid time)
RUN, LATER, FORGOT = "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z", "2026-11-30T12:00:00Z"
NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


def old_database(storage: Storage) -> None:
    """Narratives as the code before agent migration 5 wrote them: one time of each."""
    old = Migrations("agent")
    for n, step in enumerate(
        (_raw_context_and_narratives, _script_layer, _tombstones, _write_keys)
    ):
        old.step(n + 1)(step)
    old.apply(storage)
    rows = (  # id, kind, created_at (valid), updated_at (the write), supersedes, forgotten_at
        (1, "reflection", DAY, RUN, None, None),
        (2, "reflection", DAY, LATER, 1, None),
        (3, "narrative", RUN, FORGOT, None, FORGOT),
    )
    with storage.transaction():
        for nid, kind, created, updated, supersedes, forgotten in rows:
            storage.execute(
                "INSERT INTO narratives(id, gesture, importance, emotional, recurrence, unresolved,"
                " weight, kind, created_at, updated_at, supersedes, forgotten_at)"
                " VALUES (?, ?, 1, 3, 1, 1, 0.3, ?, ?, ?, ?, ?)",
                (nid, f"memory {nid}", kind, created, updated, supersedes, forgotten),
            )
        storage.execute("UPDATE narratives SET superseded_by = 2 WHERE id = 1")


def test_migration_5_backfills_record_time(storage: Storage) -> None:
    old_database(storage)
    assert AGENT_MIGRATIONS.apply(storage) == [5]
    memory = Memory(storage, None, **memory_policies(DEFAULTS), clock=system_clock)
    first, second, forgotten = memory.narratives.get([1, 2, 3])
    assert (first.created_at, first.recorded_at, first.retired_at) == (DAY, RUN, LATER)
    assert (second.created_at, second.recorded_at, second.retired_at) == (DAY, LATER, None)
    assert (forgotten.recorded_at, forgotten.retired_at) == (FORGOT, FORGOT)


def test_a_narrative_written_of_another_day_is_recorded_today(storage: Storage) -> None:
    AGENT_MIGRATIONS.apply(storage)
    clock = ManualClock(NOW)
    memory = Memory(storage, None, **memory_policies(DEFAULTS), clock=clock)
    old = memory.write(gesture="I keep choosing the garden", kind="reflection", created_at=DAY)
    assert (old.created_at, old.recorded_at, old.retired_at) == (DAY, "2026-12-01T09:00:00Z", None)
    clock.advance(hours=2)
    new = memory.write(gesture="I choose the sea now", kind="reflection", supersedes=old.id)
    [was] = memory.narratives.get([old.id])
    assert was.retired_at == new.recorded_at == new.created_at == "2026-12-01T11:00:00Z"
    clock.advance(hours=1)
    memory.forget(narratives=[new.id], why="wrong", confirm=True)
    [gone] = memory.narratives.get([new.id])
    assert gone.retired_at == gone.forgotten_at == "2026-12-01T12:00:00Z"
    assert gone.recorded_at == "2026-12-01T11:00:00Z"
