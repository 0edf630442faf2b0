"""`Storage`: what the table owners need from the agent database, whichever engine holds it.

`Database` (SQLite, apsw) and `PgDatabase` (PostgreSQL, psycopg) both satisfy it. Owners write
SQL both engines accept with `?` placeholders. What must differ between the engines is a method
each implements (`lock`, `exclusive`, `advance_ids`), never a question its caller asks; only the
text index twin (`tideline.search.open_index`) reads `dialect` to pick its engine's class.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Literal, Protocol

Params = Sequence[Any] | dict[str, Any]
Dialect = Literal["sqlite", "postgresql"]


class Rows(Protocol):
    """A statement's result: iterate it, or fetch."""

    def __iter__(self) -> Iterator[Any]: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Storage(Protocol):
    """The database surface of the table owners (see the module docstring)."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def vec_enabled(self) -> bool: ...

    @property
    def path(self) -> Path | str | None: ...

    def execute(self, sql: str, params: Params = ()) -> Rows: ...

    def executemany(self, sql: str, seq: Sequence[Params]) -> None: ...

    def rows(self, sql: str, params: Params = ()) -> list[dict[str, Any]]: ...

    def one(self, sql: str, params: Params = ()) -> dict[str, Any] | None: ...

    def scalar(self, sql: str, params: Params = ()) -> Any: ...

    def table_exists(self, name: str) -> bool: ...

    def transaction(self) -> AbstractContextManager[Any]: ...

    def reading(self) -> AbstractContextManager[None]: ...

    def lock(self, key: str) -> None: ...

    def exclusive(self, name: str) -> AbstractContextManager[str | None]: ...

    def advance_ids(self, table: str) -> None: ...

    def close(self) -> None: ...


class Reads(ABC):
    """`one` and `scalar` over an engine's `rows` and `execute` (written once for both)."""

    @abstractmethod
    def rows(self, sql: str, params: Params = ()) -> list[dict[str, Any]]: ...

    @abstractmethod
    def execute(self, sql: str, params: Params = ()) -> Any: ...

    def one(self, sql: str, params: Params = ()) -> dict[str, Any] | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Params = ()) -> Any:
        row = self.execute(sql, params).fetchone()
        return None if row is None else row[0]
