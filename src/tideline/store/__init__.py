"""Storage: apsw connections with sqlite-vec, numbered migrations, transactions, damage checks."""

from tideline.store._database import Database
from tideline.store._health import (
    REPAIR_HINT,
    check_file,
    damage_note,
    forget_damage,
    quick_check,
    remember_damage,
    remembered_damage,
)
from tideline.store._migrations import Migrations, open_database
from tideline.store._salvage import Salvage, TableSalvage, copy_rows, open_damaged

__all__ = [
    "REPAIR_HINT",
    "Database",
    "Migrations",
    "Salvage",
    "TableSalvage",
    "check_file",
    "copy_rows",
    "damage_note",
    "forget_damage",
    "open_damaged",
    "open_database",
    "quick_check",
    "remember_damage",
    "remembered_damage",
]
