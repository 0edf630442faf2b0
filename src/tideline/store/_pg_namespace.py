"""Where an agent's rows live in PostgreSQL: the URL check and the namespace (one schema each).

Kept apart from `_postgres` so settings and drivers can use them without psycopg installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from tideline.errors import ConfigError, StoreError

#: PostgreSQL's limit on an identifier, in bytes.
MAX_NAME = 63
URL_FORM = "postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def is_postgres_url(value: object) -> bool:
    return str(value).startswith(("postgresql://", "postgres://"))


def shown_url(url: str) -> str:
    """The URL without its password, for messages and reports."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL (an unclosed `[`): its credentials, if any, hidden whole
        head, at, tail = url.rpartition("@")
        return f"{head.partition('://')[0]}://***@{tail}" if at else url
    if not parts.password:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


@dataclass(frozen=True)
class Namespace:
    """Whose rows: an agent, optionally one of its users. One schema each."""

    agent: str
    user: str | None = None

    def __post_init__(self) -> None:
        for what, value in (("agent name", self.agent), ("database user", self.user)):
            if value is not None and not _NAME.match(value):
                raise ConfigError(
                    f"{what} {value!r} cannot name a PostgreSQL namespace; use letters, digits,"
                    " '.', '_' and '-', starting with a letter or digit"
                )
        if len(self.schema.encode()) > MAX_NAME:
            raise ConfigError(
                f"namespace {self.schema!r} is longer than PostgreSQL's {MAX_NAME} bytes;"
                " use a shorter agent or user name"
            )

    @property
    def schema(self) -> str:
        return ":".join(["tideline", self.agent, *([self.user] if self.user else [])])


def missing_extra(exc: ImportError) -> ConfigError:
    """The error for PostgreSQL without its driver installed."""
    return ConfigError(
        f"a PostgreSQL database needs the postgres extra ({exc.name} is missing);"
        " pip install 'tideline[postgres]'"
    )


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
