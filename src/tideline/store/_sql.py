"""Pieces of SQL that every table owner writes alike, so each writes them once: `IN` lists cut to
a length both engines bind, and the conditions of an optional time window."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

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
