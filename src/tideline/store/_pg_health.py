"""What `tideline doctor` reads of a PostgreSQL namespace from the server's catalogs, creating
nothing: the server's version, pgvector, whether the namespace's schema exists, its tables and
indexes. And the one line for each way a connection fails: a URL that is not one, a login the
server refuses, a server that is not there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tideline.errors import StoreError
from tideline.store._names import missing_extra, shown_url

URL_FORM = "postgresql://USER:PASSWORD@HOST:PORT/DATABASE"


@dataclass
class PgHealth:
    """One namespace as the catalogs show it."""

    server: str
    pgvector: str | None  # the installed version; None: not in this database
    pgvector_available: str | None  # what the server could install
    schema: bool
    tables: set[str] = field(default_factory=set)
    indexes: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name: (method, valid)


def connect_error(url: str, exc: Exception) -> StoreError:
    """One line naming the server, what went wrong and what to change."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    low = text.lower()
    if type(exc).__name__ == "ProgrammingError" or ("invalid" in low and "value" in low):
        fix = f"fix TIDELINE_DATABASE_URL ({URL_FORM})"
    elif "authentication failed" in low or ("role" in low and "does not exist" in low):
        fix = "check the user and password in TIDELINE_DATABASE_URL"
    elif "database" in low and "does not exist" in low:
        fix = "create that database or name an existing one in TIDELINE_DATABASE_URL"
    else:
        fix = "check the host and port in TIDELINE_DATABASE_URL and that the server is running"
    return StoreError(f"cannot connect to PostgreSQL at {shown_url(url)} ({first}); {fix}")


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
