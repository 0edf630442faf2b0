"""Vector candidates of a large SQLite index: the vector file (`_vector_file`) kept in step with
the database through the index's change log, searched approximately and re-scored exactly.

Every write of vectors (`TextIndex.set_vectors`, `delete`, `bind_vectors`) appends the records it
touched to `N_veclog(seq, record)` in the same transaction (record NULL: every record, the space
was bound anew). A generation records the log position it includes; a search reads the log after
it and treats those records (the *delta*) exactly: their generation rows are left out, their
current vectors read from the database (kept in memory until the log moves again) and scored
beside the generation's candidates. So a search is right whatever happened since the build — a
write by another process, a kill half way through a build or an update, a generation of another
model or file — and only ever slower: a generation that cannot be used (missing, damaged,
reset, or a delta past `delta_limit`) leaves the caller to search exactly (sqlite-vec's scan).

Builds: `build()` (explicit: after a bulk fill by `tideline embed`, the benchmark), or
`due()` + a thread when the process may build in the background (the server); one builder at a
time (`build_lock`). Publishing prunes the log up to the generation's position, leaving a reset
marker there so an older generation reads as unusable rather than as complete.

Filtered searches (a time window, a session, a kind) take the filter's records from SQL — the
condition on `rowid` evaluated against `N_vec_rowids`, sqlite-vec's own rowid table, so the
cost follows the filter's size, not the index's — and score them exactly from the file when there
are up to `FILTER_EXACT` of them; a wider filter walks the graph wider and keeps what passes,
falling back to the exact answer when too few pass.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tideline.embed import normalise
from tideline.search._vector_file import (
    Meta,
    VectorFile,
    build_lock,
    database_identity,
    vector_folder,
    write_generation,
)
from tideline.store import Database, Storage

log = logging.getLogger(__name__)

#: A filter passing at most this many rows is scored exactly from the file.
FILTER_EXACT = 50_000
#: Candidates asked of the graph per result, before the exact re-scoring.
OVERFETCH = 4
#: The graph walk when the setting leaves it to the query: at least this wide, and one step
#: per `EF_ROWS` rows of the file (recall@10 on real vectors: 0.980 at 320 over 200k rows;
#: over 1M rows 0.946 at 320, 0.976 at 640 — docs/benchmarks.md "A million turns").
EF_MIN = 320
EF_ROWS = 1_500


@dataclass(frozen=True)
class VectorOptions:
    """How an index finds its vector candidates (settings `vector_index_min`,
    `vector_ef_search`; docs/configuration.md).

    file_min: records from which an SQLite index searches its vector and lexical files (fewer:
    the in-process copy and FTS5, exact); None, the default of an index nobody configured (the
    library's, the profile's), never; ef_search: the HNSW walk (SQLite's file and PostgreSQL's `hnsw.ef_search`),
    0 to choose it per query from k and the filter; background: this process may build the
    vector file in a thread of its own (the server does; a CLI call does not wait for one)."""

    file_min: int | None = None
    ef_search: int = 0
    background: bool = False

    def large(self, records: int) -> bool:
        """An index of this many records searches its files."""
        return self.file_min is not None and records >= self.file_min

    def ef(self, n: int, rows: int = 0) -> int:
        """The walk for `n` candidates among `rows` (0: not known, PostgreSQL)."""
        if self.ef_search:
            return max(self.ef_search, n)
        return max(EF_MIN, 2 * n, rows // EF_ROWS)


class _Index(Protocol):
    """What the search needs from its `TextIndex` (which holds it)."""

    db: Storage
    name: str
    dim: int

    @property
    def model_id(self) -> str | None: ...

    def vectors_of(self, ids: Sequence[int]) -> dict[int, np.ndarray]: ...


@dataclass
class _Delta:
    """Records changed after the generation, with their current vectors (None: no vector)."""

    position: int
    changed: np.ndarray  # sorted record ids
    ids: np.ndarray  # rows' records (sorted), for the records that have a vector
    rows: np.ndarray  # unit float32


def _delta(position: int, vectors: dict[int, np.ndarray | None], dim: int) -> _Delta:
    changed = np.array(sorted(vectors), dtype=np.int64)
    ids: list[int] = []
    rows: list[np.ndarray] = []
    for i in changed.tolist():
        v = vectors[i]
        if v is not None:
            parts = np.asarray(v, dtype=np.float32).reshape(-1, dim)
            ids += [i] * len(parts)
            rows.append(parts)
    matrix = np.concatenate(rows) if rows else np.zeros((0, dim), dtype=np.float32)
    return _Delta(position, changed, np.array(ids, dtype=np.int64), normalise(matrix))


def selected_ids(db: Storage, sql: str, params: Sequence[object] = ()) -> np.ndarray:
    """The integers of a one-column query (`… AS i`), fetched as one string: a row at a time
    costs ~12 µs in Python (a time window of 4,000 turns: 50 ms)."""
    text = db.scalar(f"SELECT group_concat(i) FROM ({sql})", params)
    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.array(str(text).split(","), dtype=np.int64)


def exact_distances(index: _Index, q: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
    """Cosine distance of each record (its nearest part) to `q`, by one lookup per record."""
    q = np.asarray(q, dtype=np.float32)
    q = q / max(float(np.linalg.norm(q)), 1e-12)
    found = index.vectors_of(ids)
    return {i: 1.0 - float((normalise(v) @ q).max()) for i, v in found.items()}


def _best(ids: np.ndarray, sims: np.ndarray) -> dict[int, float]:
    """Each record's best similarity over its rows."""
    out: dict[int, float] = {}
    for i, s in zip(ids.tolist(), sims.tolist(), strict=True):
        if s > out.get(i, -math.inf):
            out[i] = s
    return out


class FileSearch:
    """The vector file of one SQLite `TextIndex` (see the module docstring)."""

    def __init__(self, index: _Index, path: Path, options: VectorOptions):
        self.index = index
        self.root = vector_folder(path)
        self.path = path
        self.options = options
        self._file: VectorFile | None = None
        self._delta: _Delta | None = None
        self._seen: tuple[int, int] | None = None  # (data_version, own writes) last checked
        self._lock = threading.Lock()
        self._building: threading.Thread | None = None
        self.writes = 0

    @property
    def _log(self) -> str:
        return f"{self.index.name}_veclog"

    # -- keeping in step -----------------------------------------------------------------------
    def position(self) -> int:
        """Where the change log is now."""
        return self._position(self.index.db)

    def _position(self, db: Storage) -> int:
        return int(db.scalar(f"SELECT coalesce(max(seq), 0) FROM {self._log}") or 0)

    def ready(self) -> tuple[VectorFile, _Delta] | None:
        """The generation and its delta as of now, or None when the file cannot answer."""
        db = self.index.db
        version = (int(db.scalar("PRAGMA data_version")), self.writes)
        with self._lock:
            file, delta = self._file, self._delta
            # a file written to since it was opened is checked again (`_refresh`)
            if self._seen == version and file and delta and not file.changed():
                return file, delta
            with db.reading():
                result = self._refresh()
            self._seen = version if result is not None else None
            return result

    def _refresh(self) -> tuple[VectorFile, _Delta] | None:
        try:
            identity = database_identity(self.path)
        except OSError:
            return None
        now = self.position()
        file = self._file
        moved = file is not None and (
            VectorFile.current(self.root, self.index.name) != file.folder.name or file.changed()
        )
        if file is None or moved or not self._usable(file, identity, now):
            self._drop()
            file = VectorFile.open_current(self.root, self.index.name)
            if file is None or not self._usable(file, identity, now):
                if file is not None:
                    file.close()
                return None
            self._file = file
        delta = self._delta if self._delta and self._delta.position >= file.meta.position else None
        start = delta.position if delta else file.meta.position
        rows = self.index.db.execute(
            f"SELECT seq, record FROM {self._log} WHERE seq > ? ORDER BY seq", (start,)
        ).fetchall()
        if any(r[1] is None for r in rows):  # the space was bound anew after the generation
            self._drop()
            return None
        fresh = sorted({int(r[1]) for r in rows})
        vectors: dict[int, np.ndarray | None] = {}
        if delta is not None:
            vectors = {int(i): None for i in delta.changed.tolist()}
            for i, v in zip(delta.ids.tolist(), delta.rows, strict=True):
                prev = vectors[i]
                vectors[i] = v[None, :] if prev is None else np.vstack([prev, v])
        if len(vectors) + len(fresh) > self.delta_limit(file):
            return None
        found = self.index.vectors_of(fresh)
        for i in fresh:
            vectors[i] = found.get(i)
        self._delta = _delta(now, vectors, file.meta.dim)
        return file, self._delta

    def _usable(self, file: VectorFile, identity: list[int], now: int) -> bool:
        return file.meta.fits(self.index.model_id, self.index.dim, identity) and (
            file.meta.position <= now
        )

    def delta_limit(self, file: VectorFile) -> int:
        """Changed records a generation still answers with (exactly) before it is given up."""
        return max(2_000, min(20_000, file.meta.records // 10))

    def due(self) -> bool:
        """A build would help: no usable generation, or its delta is a twentieth of it."""
        got = self.ready()
        if got is None:
            return True
        file, delta = got
        return len(delta.changed) > self.rebuild_after(file)

    def rebuild_after(self, file: VectorFile) -> int:
        """Changed records after which a build is due (each process reads them at its start)."""
        return max(1_000, min(10_000, file.meta.records // 50))

    def _drop(self) -> None:
        if self._file is not None:
            self._file.close()
        self._file, self._delta = None, None

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _forget(self) -> None:
        """Stop reading the open generation (it was cut short under this process)."""
        with self._lock:
            self._drop()
            self._seen = None

    # -- building ------------------------------------------------------------------------------
    def build(self, threads: int = 1) -> bool:
        """Write a generation of every stored vector and publish it; False when another process
        is building (its generation will be used once published)."""
        model_id = self.index.model_id
        if model_id is None or not self.index.dim:
            return False
        with build_lock(self.root, self.index.name) as mine:
            if not mine:
                return False
            began = time.perf_counter()
            # connections of its own: a long read on the shared one would hold back its writers
            source = Database(self.path, readonly=True)
            try:
                with source.reading():
                    position = self._position(source)
                    ids, matrix = self._all_vectors(source)
            finally:
                source.close()
            meta = Meta(
                model_id,
                self.index.dim,
                database_identity(self.path),
                position,
                len(ids),
                len(np.unique(ids)),
            )
            write_generation(self.root, self.index.name, meta, ids, matrix, threads)
            target = Database(self.path)
            try:
                with target.transaction():  # older generations now read as reset, not complete
                    target.execute(f"DELETE FROM {self._log} WHERE seq < ?", (position,))
                    target.execute(
                        f"UPDATE {self._log} SET record = NULL WHERE seq = ?", (position,)
                    )
            finally:
                target.close()
            log.info(
                "index %s: vector file of %d rows built in %.1f s",
                self.index.name,
                len(ids),
                time.perf_counter() - began,
            )
        with self._lock:
            self._seen = None
        return True

    def _all_vectors(self, db: Database) -> tuple[np.ndarray, np.ndarray]:
        """(record per row, unit rows), sorted by record then part."""
        name, dim = self.index.name, self.index.dim
        record = np.sort(selected_ids(db, f"SELECT rowid AS i FROM {name}_vec_rowids"))
        parts: list[tuple[Any, ...]] = db.execute(
            f"SELECT record, part, embedding FROM {name}_vecpart ORDER BY record, part"
        ).fetchall()
        extra = np.array([r[0] for r in parts], dtype=np.int64)
        extra = extra[np.isin(extra, record)]
        ids = np.sort(np.concatenate([record, extra]), kind="stable")
        matrix = np.empty((len(ids), dim), dtype=np.float32)
        first_row = np.searchsorted(ids, record, side="left")
        row_of = dict(zip(record.tolist(), first_row.tolist(), strict=True))
        for i, blob in db.execute(f"SELECT rowid, embedding FROM {name}_vec"):
            matrix[row_of[int(i)]] = np.frombuffer(blob, dtype=np.float32)
        for i, n, blob in parts:
            if int(i) in row_of:
                matrix[row_of[int(i)] + int(n)] = np.frombuffer(blob, dtype=np.float32)
        return ids, normalise(matrix)

    def build_in_background(self) -> bool:
        """Start a build on a daemon thread when one is due and none is running here."""
        if not self.options.background or (self._building and self._building.is_alive()):
            return False
        if not self.due():
            return False
        self._building = threading.Thread(
            target=self._build_quietly, name=f"vectors-{self.index.name}", daemon=True
        )
        self._building.start()
        return True

    def _build_quietly(self) -> None:
        try:
            self.build()
        except Exception:  # the exact search answers meanwhile; the next due() tries again
            log.exception("index %s: building the vector file failed", self.index.name)

    # -- searching -----------------------------------------------------------------------------
    def knn(
        self, q: np.ndarray, k: int, where: str | None, params: Sequence[object]
    ) -> list[tuple[int, float]] | None:
        """The `k` nearest records as (id, cosine distance), nearest first; None when the file
        cannot answer (the caller searches exactly)."""
        got = self.ready()
        if got is None:
            self.build_in_background()
            return None
        file, delta = got
        q = np.asarray(q, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        try:
            best = self._knn(file, delta, q, k, where, params)
        except OSError:  # the file changed under this process: never read again, search exactly
            self._forget()
            return None
        if self.options.background and len(delta.changed) > self.rebuild_after(file):
            self.build_in_background()
        top = sorted(best.items(), key=lambda r: (-r[1], r[0]))[:k]
        return [(i, 1.0 - s) for i, s in top]

    def _knn(
        self,
        file: VectorFile,
        delta: _Delta,
        q: np.ndarray,
        k: int,
        where: str | None,
        params: Sequence[object],
    ) -> dict[int, float]:
        if where is None:
            best = self._nearest(file, delta, q, k, None)
        else:
            allowed = selected_ids(
                self.index.db,
                f"SELECT rowid AS i FROM {self.index.name}_vec_rowids WHERE {where}",
                params,
            )
            allowed.sort()
            if len(allowed) <= FILTER_EXACT:
                best = self._exact(file, delta, q, allowed, k)
            else:
                best = self._nearest(file, delta, q, k, allowed)
                if len(best) < k:
                    best = self._exact(file, delta, q, allowed, k)
        return best

    def _nearest(
        self,
        file: VectorFile,
        delta: _Delta,
        q: np.ndarray,
        k: int,
        allowed: np.ndarray | None,
    ) -> dict[int, float]:
        """The graph's candidates (widened by the filter's share), re-scored exactly, plus the
        delta; only `allowed` records when given."""
        share = 1.0 if allowed is None else max(len(allowed) / max(1, file.meta.records), 1e-6)
        n = min(file.meta.rows, math.ceil(OVERFETCH * k / share) + len(delta.changed))
        rows = file.candidates(q, n, self.options.ef(n, file.meta.rows))
        records = file.ids[rows]
        keep = ~np.isin(records, delta.changed)
        if allowed is not None:
            keep &= np.isin(records, allowed)
        rows, records = rows[keep], records[keep]
        best = _best(records, file.rows(rows) @ q) if len(rows) else {}
        if len(delta.ids):
            mask = np.ones(len(delta.ids), dtype=bool)
            if allowed is not None:
                mask = np.isin(delta.ids, allowed)
            for i, s in _best(delta.ids[mask], delta.rows[mask] @ q).items():
                best[i] = max(s, best.get(i, -math.inf))
        return best

    def _exact(
        self,
        file: VectorFile,
        delta: _Delta,
        q: np.ndarray,
        allowed: np.ndarray,
        k: int | None = None,
    ) -> dict[int, float]:
        """The allowed records scored from the file (or the delta): every one, or (`k`) enough
        of the best rows to hold the `k` best records."""
        stored = allowed[~np.isin(allowed, delta.changed)]
        rows = file.rows_of(stored)
        best: dict[int, float] = {}
        left_out = -math.inf  # the best row not looked at record by record
        for start in range(0, len(rows), 65536):
            part = rows[start : start + 65536]
            sims = file.rows(part) @ q
            if k is not None and len(part) > 8 * k:  # the best rows hold the best records
                order = np.argpartition(-sims, 8 * k)
                left_out = max(left_out, float(sims[order[8 * k]]))
                part, sims = part[order[: 8 * k]], sims[order[: 8 * k]]
            for i, sim in _best(file.ids[part], sims).items():
                best[i] = max(sim, best.get(i, -math.inf))
        mask = np.isin(delta.ids, allowed)
        for i, sim in _best(delta.ids[mask], delta.rows[mask] @ q).items():
            best[i] = max(sim, best.get(i, -math.inf))
        kth = sorted(best.values(), reverse=True)[k - 1] if k and len(best) >= k else -math.inf
        if left_out > -math.inf and left_out >= kth:  # a left-out row may matter (many parts)
            return self._exact(file, delta, q, allowed)
        return best

    def distances(self, q: np.ndarray, ids: Sequence[int]) -> dict[int, float]:
        """Cosine distance of each record (its nearest part) to `q`: from the file, or by one
        lookup per record while it is not ready."""
        q = np.asarray(q, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        got = self.ready()
        if got is not None:
            file, delta = got
            wanted = np.unique(np.asarray(list(ids), dtype=np.int64))
            try:
                best = self._exact(file, delta, q, wanted)
                return {i: 1.0 - s for i, s in best.items()}
            except OSError:  # changed under this process: never read again
                self._forget()
        return exact_distances(self.index, q, ids)

    def stats(self) -> dict[str, Any]:
        """What `doctor` and the benchmark show: the generation's rows and the delta."""
        got = self.ready()
        if got is None:
            return {"ready": False}
        file, delta = got
        return {
            "ready": True,
            "rows": file.meta.rows,
            "records": file.meta.records,
            "position": file.meta.position,
            "delta": len(delta.changed),
            "folder": file.folder.name,
        }
