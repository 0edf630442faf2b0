"""Record ids as callers send them: any integer, of which SQLite can store only 64-bit ones."""

from __future__ import annotations

from collections.abc import Iterable

MAX_ROW_ID = 2**63 - 1


def storable_ids(ids: Iterable[int]) -> list[int]:
    """The ids SQLite can hold; a larger one cannot name a row, so lookups treat it as missing
    instead of letting apsw raise OverflowError."""
    return [i for i in ids if -MAX_ROW_ID - 1 <= i <= MAX_ROW_ID]
