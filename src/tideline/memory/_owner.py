"""What the two table owners of memory (`RawContext`, `Narratives`) share: the `Scope` that
narrows a search to their rows, and pending vectors (their `IN` lists and time windows are the
store's: `id_lists`, `time_range`)."""

from __future__ import annotations

from collections.abc import Sequence

from tideline.search import IndexBase, Scope


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
