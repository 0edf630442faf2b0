"""Record ids as callers send them: any integer, of which SQLite and PostgreSQL store only
signed 64-bit ones (an id is 1 … `MAX_ID`). A larger one cannot name a row, so lookups treat it
as missing instead of letting the driver raise `OverflowError` (#21: `fact_reject` with 2^63).
The drivers refuse such ids before they reach the core (`tideline.fields.ID`)."""

from __future__ import annotations

from collections.abc import Iterable

MAX_ID = 2**63 - 1


def storable(record_id: int) -> bool:
    """Whether `record_id` fits the engines' 64-bit integers (a larger one names no row)."""
    return -MAX_ID - 1 <= record_id <= MAX_ID


def storable_ids(ids: Iterable[int]) -> list[int]:
    """The ids the engines can hold, in order."""
    return [i for i in ids if storable(i)]
