"""What the two table owners of memory (`RawContext`, `Narratives`) share: the `Scope` that
narrows a search to their rows, the rows a forget erases now, and pending vectors (their `IN`
lists and time windows are the store's: `id_lists`, `time_range`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from tideline.search import IndexBase, Scope
from tideline.store import Storage, id_lists


def scope(index: IndexBase, table: str, conds: list[str], params: list[object]) -> Scope:
    """A search over `index` limited to the rows of `table` that meet every condition."""
    if not conds:
        return Scope(index)
    where = f"rowid IN (SELECT id FROM {table} WHERE {' AND '.join(conds)})"
    return Scope(index, where, tuple(params))


def unforgotten(db: Storage, table: str, ids: Sequence[int]) -> Iterator[list[int]]:
    """`ids` in `IN`-list batches, each cut to the rows of `table` not forgotten yet: what a
    forget erases now (a tombstone is never erased twice)."""
    for marks, part in id_lists(ids):
        found = db.execute(
            f"SELECT id FROM {table} WHERE id IN ({marks}) AND forgotten_at IS NULL", part
        )
        yield [int(r[0]) for r in found]


def pending_ids(ids: Sequence[int], index: IndexBase, limit: int | None = None) -> list[int]:
    """The first `limit` (None: all) of `ids` that `index` holds no vector for."""
    have = index.vector_ids()
    missing = [i for i in ids if i not in have]
    return missing if limit is None else missing[:limit]
