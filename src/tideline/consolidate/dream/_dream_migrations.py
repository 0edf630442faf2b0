"""The dream layers' own migration set ("dream"): each step calls the owner of its tables.

Applied when a `Dream` is built (like session memory's set), so an agent database opened by an
older Tideline gains the tables on first use and keeps everything else.
"""

from __future__ import annotations

from tideline.consolidate.dream._basis import Basis
from tideline.consolidate.dream._dream_runs import DreamRuns
from tideline.consolidate.dream._threads import Threads
from tideline.store import Migrations, Storage

DREAM_MIGRATIONS = Migrations("dream")


@DREAM_MIGRATIONS.step(1)
def _run_records(db: Storage) -> None:
    DreamRuns.create_tables(db)


@DREAM_MIGRATIONS.step(2)
def _threads(db: Storage) -> None:
    Threads.create_tables(db)


@DREAM_MIGRATIONS.step(3)
def _basis(db: Storage) -> None:
    Basis.create_tables(db)


@DREAM_MIGRATIONS.step(4)
def _runs_may_be_skipped(db: Storage) -> None:
    """A dream with no LLM for its LLM layers is recorded `skipped`, not `done`."""
    DreamRuns.allow_skipped(db)
