"""Database upkeep: what `tideline doctor` checks, what `doctor --repair` salvages and rebuilds,
and what `tideline migrate` moves between SQLite and a PostgreSQL namespace. The store itself
keeps only the damage checks every open runs; this package sits above the composition root
(doctor and repair open an app) and below the drivers.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.upkeep._copy import TableCopy, TableShape, copy_table, digest, table_shapes
    from tideline.upkeep._doctor import (
        AGENT_DATABASE,
        MIGRATION_SETS,
        FileCheck,
        Report,
        check_databases,
        database_files,
        run_doctor,
    )
    from tideline.upkeep._migrate import AGENT_SETS, IndexCopy, MoveReport, migrate
    from tideline.upkeep._pg_health import PgHealth, check_namespace
    from tideline.upkeep._repair import Repaired, repair
    from tideline.upkeep._salvage import (
        UNRECOVERABLE,
        Salvage,
        TableSalvage,
        copy_rows,
        open_damaged,
    )

__all__ = [
    "AGENT_DATABASE",
    "AGENT_SETS",
    "MIGRATION_SETS",
    "UNRECOVERABLE",
    "FileCheck",
    "IndexCopy",
    "MoveReport",
    "PgHealth",
    "Repaired",
    "Report",
    "Salvage",
    "TableCopy",
    "TableSalvage",
    "TableShape",
    "check_databases",
    "check_namespace",
    "copy_rows",
    "copy_table",
    "database_files",
    "digest",
    "migrate",
    "open_damaged",
    "repair",
    "run_doctor",
    "table_shapes",
]

__getattr__, __dir__ = _lazy_exports(__name__)
