"""A persistent embedding cache: unchanged text is never embedded twice.

Keyed by (model id, kind, sha256 of the text) — kind is "d" for documents, "q" for queries, since
e5 embeds them differently. One SQLite file can serve every agent and every library collection on
the machine. `CachedEmbedder` also counts hits, misses and the seconds spent inside the real
embedder, which the benchmarks report.

Threads: a server embeds outside its memory lock (MCP workers, HTTP requests, the query thread of
`search.pending_vector`), so many threads share one cache. apsw refuses a connection used by two
threads at once (`ThreadingViolationError`: 12 of 180 requests in 60-way bursts, #21), so every
read and write of the cache file takes the cache's own lock; the embedding itself does not, so
requests to an embedding service still run side by side.

A query's vector is written behind its answer, on the cache's own writer thread and connection:
the search that asked for it never waits on the file. One cache file serves every agent on the
machine, and another process's indexing batch holds its write lock (up to the busy timeout, 5 s);
even alone, one commit in 15–30 stalled 4–60 ms while other processes loaded the disk (issue
34: an agent waits for its query's embedding every turn). Until it is written the vector is
served from memory; `close` waits for the writes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tideline.embed._embedder import Embedder
from tideline.store import Database, Migrations, Storage, in_lists, open_database

log = logging.getLogger(__name__)

_MIGRATIONS = Migrations("embed_cache")


@_MIGRATIONS.step(1)
def _create(db: Storage) -> None:
    db.execute(
        "CREATE TABLE embeddings(model_id TEXT NOT NULL, kind TEXT NOT NULL, hash BLOB NOT NULL,"
        " vector BLOB NOT NULL, PRIMARY KEY (model_id, kind, hash)) WITHOUT ROWID"
    )


_INSERT = "INSERT OR REPLACE INTO embeddings(model_id, kind, hash, vector) VALUES (?, ?, ?, ?)"


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    embed_seconds: float = 0.0


class CachedEmbedder:
    """Wraps an `Embedder`; looks every text up by hash before embedding it."""

    def __init__(self, inner: Embedder, path: Path | str):
        self.inner = inner
        self.model_id = inner.model_id
        self.max_input_tokens = inner.max_input_tokens
        self.path = Path(path)
        self.db = open_database(path, _MIGRATIONS)
        self.stats = CacheStats()
        self._lock = threading.Lock()  # the connection and the counters, one thread at a time
        self._unwritten: dict[bytes, np.ndarray] = {}  # query vectors still to be written
        self._writer: ThreadPoolExecutor | None = None  # one thread, its own connection
        self._writer_pid = 0
        self._writer_db: Database | None = None

    @property
    def dim(self) -> int:
        return self.inner.dim

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def _lookup(self, kind: str, hashes: list[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            if kind == "q" and self._unwritten:
                found = {h: self._unwritten[h] for h in hashes if h in self._unwritten}
                hashes = [h for h in hashes if h not in found]
            for marks, part in in_lists(hashes):
                rows = self.db.execute(
                    f"SELECT hash, vector FROM embeddings WHERE model_id = ? AND kind = ? AND hash IN ({marks})",
                    (self.model_id, kind, *part),
                )
                for h, blob in rows:
                    found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _embed(self, kind: str, texts: Sequence[str]) -> np.ndarray:
        hashes = [text_hash(t) for t in texts]
        found = self._lookup(kind, hashes)
        todo: dict[bytes, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in found and h not in todo:
                todo[h] = t
        with self._lock:
            self.stats.hits += len(texts) - len(todo)
            self.stats.misses += len(todo)
        if todo:
            started = time.perf_counter()
            items = list(todo.items())
            if kind == "q":
                vectors = np.stack([self.inner.embed_query(t) for _, t in items])
            else:
                vectors = self.inner.embed_documents([t for _, t in items])
            for (h, _), v in zip(items, vectors, strict=True):
                found[h] = np.asarray(v, dtype=np.float32)
            rows = [(self.model_id, kind, h, found[h].tobytes()) for h, _ in items]
            if kind == "q":
                with self._lock:
                    self.stats.embed_seconds += time.perf_counter() - started
                    self._unwritten.update((h, found[h]) for h, _ in items)
                    self._behind().submit(self._write_behind, rows)
            else:
                with self._lock, self.db.transaction():
                    self.stats.embed_seconds += time.perf_counter() - started
                    self.db.executemany(_INSERT, rows)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[h] for h in hashes])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._embed("d", texts)

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self._embed("q", [text])[0]
        return vector

    def forget(self, texts: Sequence[str]) -> int:
        """Drop the document vectors of these texts, of every model: forgotten words must not
        survive as cached vectors. Returns how many were dropped."""
        hashes = list({text_hash(t) for t in texts})
        dropped = 0
        with self._lock, self.db.transaction():
            for marks, part in in_lists(hashes):
                self.db.execute(
                    f"DELETE FROM embeddings WHERE kind = 'd' AND hash IN ({marks})", part
                )
                dropped += self.db.conn.changes()
        return dropped

    def _behind(self) -> ThreadPoolExecutor:
        """The writer (made on first use; anew in a forked child, which has none of its
        parent's threads). The caller holds `_lock`."""
        if self._writer is None or self._writer_pid != os.getpid():
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="tideline-cache-writer")
            self._writer_pid, self._writer_db = os.getpid(), None
        return self._writer

    def _write_behind(self, rows: list[tuple[str, str, bytes, bytes]]) -> None:
        """On the writer thread: store query vectors; a failure costs a later embedding only."""
        try:
            if self._writer_db is None:
                self._writer_db = open_database(self.path, _MIGRATIONS)
            with self._writer_db.transaction():
                self._writer_db.executemany(_INSERT, rows)
        except Exception as exc:  # locked past the busy timeout, a full disk: not cached
            log.warning("%d query vector(s) not cached in %s: %s", len(rows), self.path, exc)
        with self._lock:
            for _, _, h, _ in rows:
                self._unwritten.pop(h, None)

    def close(self) -> None:
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)  # the query vectors still queued are written first
        with self._lock:
            if self._writer_db is not None:
                self._writer_db.close()
                self._writer_db = None
            self.db.close()
