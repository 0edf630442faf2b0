"""Storage: apsw connections with sqlite-vec (or a PostgreSQL namespace), numbered migrations,
transactions, the damage checks every open runs (doctor, repair and migrate: `tideline.upkeep`)."""

from tideline.store._database import Database, load_vec
from tideline.store._dialect import to_postgres
from tideline.store._health import (
    REPAIR_HINT,
    SQLITE_MAGIC,
    check_file,
    damage_note,
    forget_damage,
    quick_check,
    remember_damage,
    remembered_damage,
    wal_damage,
    wal_path,
)
from tideline.store._migrations import Migrations, allow_values, open_database, open_postgres
from tideline.store._pg_namespace import (
    Namespace,
    connect_error,
    is_postgres_url,
    missing_extra,
    shown_url,
)
from tideline.store._run_log import INTERRUPTED, RunLog
from tideline.store._sql import MAX_ID, id_lists, in_lists, storable, storable_ids, time_range
from tideline.store._storage import Dialect, Rows, Storage
from tideline.store._write_keys import MAX_KEY, WriteKeys, check_key

__all__ = [
    "INTERRUPTED",
    "MAX_ID",
    "MAX_KEY",
    "REPAIR_HINT",
    "SQLITE_MAGIC",
    "Database",
    "Dialect",
    "Migrations",
    "Namespace",
    "Rows",
    "RunLog",
    "Storage",
    "WriteKeys",
    "allow_values",
    "check_file",
    "check_key",
    "connect_error",
    "damage_note",
    "forget_damage",
    "id_lists",
    "in_lists",
    "is_postgres_url",
    "load_vec",
    "missing_extra",
    "open_database",
    "open_postgres",
    "quick_check",
    "remember_damage",
    "remembered_damage",
    "shown_url",
    "storable",
    "storable_ids",
    "time_range",
    "to_postgres",
    "wal_damage",
    "wal_path",
]
