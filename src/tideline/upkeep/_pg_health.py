"""What `tideline doctor` reads of a PostgreSQL namespace from the server's catalogs, creating
nothing: the server's version, pgvector, whether the namespace's schema exists, its tables and
indexes (the one line for each way a connection fails is the store's `connect_error`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tideline.store import connect_error, missing_extra


@dataclass
class PgHealth:
    """One namespace as the catalogs show it."""

    server: str
    pgvector: str | None  # the installed version; None: not in this database
    pgvector_available: str | None  # what the server could install
    schema: bool
    tables: set[str] = field(default_factory=set)
    indexes: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name: (method, valid)


def check_namespace(url: str, schema: str, timeout: int = 10) -> PgHealth:
    """Read the namespace `schema`'s state; `StoreError` (one line) when the server cannot be
    reached."""
    try:
        import psycopg
    except ImportError as exc:
        raise missing_extra(exc) from exc
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=timeout)
    except psycopg.Error as exc:
        raise connect_error(url, exc) from None
    with conn:

        def one(sql: str, *params: Any) -> Any:
            row = conn.execute(sql, params).fetchone()
            return None if row is None else row[0]

        health = PgHealth(
            server=str(one("SHOW server_version")),
            pgvector=one("SELECT extversion FROM pg_extension WHERE extname = 'vector'"),
            pgvector_available=one(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ),
            schema=bool(one("SELECT 1 FROM pg_namespace WHERE nspname = %s", schema)),
        )
        if health.schema:
            health.tables = {
                r[0]
                for r in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
                )
            }
            health.indexes = {
                name: (method, bool(valid))
                for name, method, valid in conn.execute(
                    "SELECT c.relname, am.amname, i.indisvalid FROM pg_index i"
                    " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam"
                    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s",
                    (schema,),
                )
            }
    return health
