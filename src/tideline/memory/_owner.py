"""What the two table owners of memory (`RawContext`, `Narratives`) share: id batches for `IN`
lists, time windows, the `Scope` that narrows a search to their rows, and pending vectors."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from tideline.search import IndexBase, Scope


def batches(ids: Sequence[int], size: int = 500) -> Iterator[list[int]]:
    """`ids` in slices small enough for one `IN (…)` list."""
    for start in range(0, len(ids), size):
        yield [int(i) for i in ids[start : start + size]]


def time_range(column: str, since: str | None, until: str | None) -> tuple[list[str], list[object]]:
    """SQL conditions (and their parameters) for an inclusive time window on `column`."""
    conds: list[str] = []
    params: list[object] = []
    for op, value in ((">=", since), ("<=", until)):
        if value:
            conds.append(f"{column} {op} ?")
            params.append(value)
    return conds, params


def scope(index: IndexBase, table: str, conds: list[str], params: list[object]) -> Scope:
    """A search over `index` limited to the rows of `table` that meet every condition."""
    if not conds:
        return Scope(index)
    where = f"rowid IN (SELECT id FROM {table} WHERE {' AND '.join(conds)})"
    return Scope(index, where, tuple(params))


def pending_ids(ids: Sequence[int], index: IndexBase, limit: int | None = None) -> list[int]:
    """The first `limit` (None: all) of `ids` that `index` holds no vector for."""
    have = index.vector_ids()
    missing = [i for i in ids if i not in have]
    return missing if limit is None else missing[:limit]
