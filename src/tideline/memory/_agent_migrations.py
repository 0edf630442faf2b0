"""The agent database (`<home>/memory.db`): the migration set and the order of its steps.

Each table is created by the module that owns it (`RawContext.create_tables`,
`Narratives.create_tables`, `tideline.search.create_index`); this module only says in which step.
The script layer's tables are `tideline.analysis`'s own migration set ("analysis").
"""

from __future__ import annotations

from tideline.memory._narratives import Narratives
from tideline.memory._raw import RawContext
from tideline.store import Migrations, Storage, WriteKeys

AGENT_MIGRATIONS = Migrations("agent")


@AGENT_MIGRATIONS.step(1)
def _raw_context_and_narratives(db: Storage) -> None:
    RawContext.create_tables(db)
    Narratives.create_tables(db)


@AGENT_MIGRATIONS.step(2)
def _script_layer(db: Storage) -> None:
    """Moved to analysis#1 (`tideline.analysis.ANALYSIS_MIGRATIONS`). Kept as a no-op: databases
    that ran it record agent v2, and dropping the step would make them refuse to open
    (`SchemaTooNew`)."""


@AGENT_MIGRATIONS.step(3)
def _tombstones(db: Storage) -> None:
    """Forgetting (tombstones on sessions, turns and narratives) and narrative corrections."""
    RawContext.add_tombstones(db)
    Narratives.add_tombstones(db)


@AGENT_MIGRATIONS.step(4)
def _write_keys(db: Storage) -> None:
    """Idempotency keys of writes (`tideline.store.WriteKeys`)."""
    WriteKeys.create_table(db)


@AGENT_MIGRATIONS.step(5)
def _record_times(db: Storage) -> None:
    """Narratives' record time beside their valid time, backfilled (`Narratives.add_record_times`)."""
    Narratives.add_record_times(db)
