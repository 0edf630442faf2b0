"""Pieces of SQL that every table owner writes alike, so each writes them once: `IN` lists cut to
a length both engines bind, the conditions of an optional time window, and which record ids the
engines can store.

Record ids as callers send them: any integer, of which SQLite and PostgreSQL store only signed
64-bit ones (an id is 1 … `MAX_ID`). A larger one cannot name a row, so lookups treat it as
missing instead of letting the driver raise `OverflowError` (#21: `fact_reject` with 2^63). The
drivers refuse such ids before they reach the core (`tideline.fields.ID`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

MAX_ID = 2**63 - 1


def storable(record_id: int) -> bool:
    """Whether `record_id` fits the engines' 64-bit integers (a larger one names no row)."""
    return -MAX_ID - 1 <= record_id <= MAX_ID


def storable_ids(ids: Iterable[int]) -> list[int]:
    """The ids the engines can hold, in order."""
    return [i for i in ids if storable(i)]


#: Values in one `IN (…)` list: far below SQLite's limit on bound parameters (32,766).
IN_LIST = 500


def in_lists(values: Sequence[T], size: int = IN_LIST) -> Iterator[tuple[str, list[T]]]:
    """`values` in slices small enough for one `IN (…)` list, each with its marks (`?,?,…`)."""
    for start in range(0, len(values), size):
        part = list(values[start : start + size])
        yield ",".join("?" * len(part)), part


def id_lists(ids: Iterable[int], size: int = IN_LIST) -> Iterator[tuple[str, list[int]]]:
    """`in_lists` of record ids, each a Python `int` (apsw binds no numpy integer)."""
    return in_lists([int(i) for i in ids], size)


def time_range(column: str, since: str | None, until: str | None) -> tuple[list[str], list[object]]:
    """SQL conditions (and their parameters) for an inclusive time window on `column`."""
    conds: list[str] = []
    params: list[object] = []
    for op, value in ((">=", since), ("<=", until)):
        if value:
            conds.append(f"{column} {op} ?")
            params.append(value)
    return conds, params
