"""Storage: apsw connections with sqlite-vec (or a PostgreSQL namespace), numbered migrations,
transactions, damage checks."""

from tideline.store._copy import TableCopy, TableShape, copy_table, digest, table_shapes
from tideline.store._database import Database
from tideline.store._dialect import to_postgres
from tideline.store._health import (
    REPAIR_HINT,
    check_file,
    damage_note,
    forget_damage,
    quick_check,
    remember_damage,
    remembered_damage,
)
from tideline.store._ids import MAX_ID, storable, storable_ids
from tideline.store._keys import MAX_KEY, WriteKeys, check_key
from tideline.store._migrations import Migrations, allow_values, open_database, open_postgres
from tideline.store._names import Namespace, is_postgres_url, shown_url
from tideline.store._pg_health import PgHealth, check_namespace, connect_error
from tideline.store._salvage import (
    UNRECOVERABLE,
    Salvage,
    TableSalvage,
    copy_rows,
    open_damaged,
)
from tideline.store._storage import Dialect, Rows, Storage

__all__ = [
    "MAX_ID",
    "MAX_KEY",
    "REPAIR_HINT",
    "UNRECOVERABLE",
    "Database",
    "Dialect",
    "Migrations",
    "Namespace",
    "PgHealth",
    "Rows",
    "Salvage",
    "Storage",
    "TableCopy",
    "TableSalvage",
    "TableShape",
    "WriteKeys",
    "allow_values",
    "check_file",
    "check_key",
    "check_namespace",
    "connect_error",
    "copy_rows",
    "copy_table",
    "damage_note",
    "digest",
    "forget_damage",
    "is_postgres_url",
    "open_damaged",
    "open_database",
    "open_postgres",
    "quick_check",
    "remember_damage",
    "remembered_damage",
    "shown_url",
    "storable",
    "storable_ids",
    "table_shapes",
    "to_postgres",
]
