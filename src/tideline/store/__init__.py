"""Storage: apsw connections with sqlite-vec, numbered migrations, transactions."""

from tideline.store._database import Database
from tideline.store._migrations import Migrations, open_database

__all__ = ["Database", "Migrations", "open_database"]
