"""The text index of a database's engine: owners call these, never a class by name."""

from __future__ import annotations

from tideline.search._analyse import DEFAULT_ANALYSER, Analyser
from tideline.search._index import SqliteTextIndex
from tideline.search._index_base import IndexBase
from tideline.search._pg_index import PgTextIndex
from tideline.store import Storage


def _kind(db: Storage) -> type[IndexBase]:
    return PgTextIndex if db.dialect == "postgresql" else SqliteTextIndex


def open_index(
    db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
) -> IndexBase:
    """`SqliteTextIndex` (FTS5 + sqlite-vec) or `PgTextIndex` (tsvector + pgvector)."""
    return _kind(db)(db, name, analyser, keys)


def create_index(db: Storage, name: str) -> None:
    """Create an index's tables in a migration, on the database's engine."""
    _kind(db).create_tables(db, name)
