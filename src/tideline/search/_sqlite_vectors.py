"""`SqliteVectors`: the vectors of an SQLite index — a layer of `SqliteTextIndex` (`_index`),
above its files (`_sqlite_files`).

- `N_vec`  sqlite-vec `vec0`, cosine distance, created when the space is bound
  (`bind_vectors`): the vector of each record's first part, keyed by the record id;
- `N_vecpart(record, part, embedding)`: the vectors of parts 1, 2, … of records whose text is
  longer than the model's input limit (see `tideline.embed.embed_parts`). A record is as near as
  its nearest part, so KNN takes the best part per record and returns each record once.
A record has a vector when `N_vec` has its row (all its parts are written in one transaction).
`vector_spaces` records the model id and dimension behind `N_vec`: a different embedder means the
old vectors are dropped and must be re-embedded — vectors of two models are never mixed.
KNN, by the index's size: a large index searches its vector file (`_sqlite_files`); a smaller
one, unfiltered, an in-process numpy copy of both tables (a matrix product over 100k vectors
takes a few ms, sqlite-vec's scan ~60 ms here), loaded once the process has searched the index
`SCANS_BEFORE_COPY` times and reloaded when this object writes or `PRAGMA data_version` shows
another connection committed; a filter, or a process that searched only a few times, uses
sqlite-vec's exact scan.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tideline.embed import normalise
from tideline.search._analyse import DEFAULT_ANALYSER, Analyser
from tideline.search._hits import Hit
from tideline.search._knn import exact_distances
from tideline.search._sqlite_files import SqliteFiles
from tideline.search._sqlite_terms import Row
from tideline.store import Storage, id_lists

log = logging.getLogger(__name__)


class Readable(Protocol):
    """A connection `stored_vectors` can read from (apsw's, or `Database`)."""

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...


#: Vector searches of an index answered by sqlite-vec's scan before this process loads its copy
#: of every vector (`TextIndex._copy_pays`): more than one CLI search makes.
SCANS_BEFORE_COPY = 8


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


@dataclass(frozen=True)
class _Matrix:
    """The numpy copy of the vectors: rows sorted by record; `starts` marks each record's first
    row when some record has several parts (None: one row per record)."""

    version: tuple[int, int]
    ids: np.ndarray
    rows: np.ndarray
    starts: np.ndarray | None


class SqliteVectors(SqliteFiles):
    """The vectors of an SQLite index and their nearest-neighbour search (see the module
    docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        self._matrix: _Matrix | None = None
        self._scans = 0  # vector searches answered without the copy (`_copy_pays`)
        super().__init__(db, name, analyser, keys)

    def bind_vectors(self, model_id: str, dim: int) -> bool:
        """Make `N_vec` hold vectors of this model. Returns True when old vectors were dropped."""
        if not self.db.vec_enabled or dim <= 0:
            return False
        if self.model_id == model_id and self.dim == dim:
            return False
        self._writes += 1
        with self.db.transaction():
            row = self.db.one(
                "SELECT model_id, dim FROM vector_spaces WHERE name = ?", (self.name,)
            )
            if row and (row["model_id"], row["dim"]) == (model_id, dim):  # another process bound it
                self.model_id, self.dim = model_id, dim
                return False
            dropped = row is not None
            self.db.execute(f"DROP TABLE IF EXISTS {self.name}_vec")
            self.db.execute(f"DELETE FROM {self.name}_vecpart")
            self.db.execute(
                f"CREATE VIRTUAL TABLE {self.name}_vec USING vec0("
                f"embedding float[{dim}] distance_metric=cosine)"
            )
            self.db.execute(
                "INSERT OR REPLACE INTO vector_spaces(name, model_id, dim) VALUES (?, ?, ?)",
                (self.name, model_id, dim),
            )
            self._note_changes(None)
        if dropped:
            log.warning(
                "index %s: embedder changed (%s -> %s); vectors will be re-embedded",
                self.name,
                self.model_id,
                model_id,
            )
        self.model_id, self.dim = model_id, dim
        return dropped

    def set_vectors(self, items: Iterable[tuple[int, np.ndarray]]) -> None:
        """Store each record's vector: shape (dim,), or (parts, dim) for a text cut in parts."""
        if not self.has_vectors:
            return
        firsts: list[tuple[int, bytes]] = []
        rest: list[tuple[int, int, bytes]] = []
        for i, v in items:
            parts = np.asarray(v, dtype=np.float32).reshape(-1, self.dim)
            firsts.append((int(i), _blob(parts[0])))
            rest += [(int(i), n, _blob(p)) for n, p in enumerate(parts[1:], 1)]
        ids = [(i,) for i, _ in firsts]
        self._writes += 1
        with self.db.transaction():
            self.db.executemany(f"DELETE FROM {self.name}_vec WHERE rowid = ?", ids)
            self.db.executemany(f"DELETE FROM {self.name}_vecpart WHERE record = ?", ids)
            self.db.executemany(
                f"INSERT INTO {self.name}_vec(rowid, embedding) VALUES (?, ?)", firsts
            )
            self.db.executemany(
                f"INSERT INTO {self.name}_vecpart(record, part, embedding) VALUES (?, ?, ?)", rest
            )
            self._note_changes([i for (i,) in ids])

    def vectors_of(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Each record's vectors, shape (parts, dim), for copying to a record with the same text.
        One lookup per record: `rowid IN (…)` makes sqlite-vec scan the whole table (~3 s at
        100k records)."""
        out: dict[int, list[np.ndarray]] = {}
        if not self.has_vectors:
            return {}
        for i in ids:
            row = self.db.execute(
                f"SELECT embedding FROM {self.name}_vec WHERE rowid = ?", (int(i),)
            ).fetchone()
            if row is not None:
                out[int(i)] = [np.frombuffer(row[0], dtype=np.float32)]
        for marks, part in id_lists(ids):
            for i, blob in self.db.execute(
                f"SELECT record, embedding FROM {self.name}_vecpart WHERE record IN ({marks})"
                " ORDER BY record, part",
                part,
            ):
                if i in out:
                    out[i].append(np.frombuffer(blob, dtype=np.float32))
        return {i: np.stack(v) for i, v in out.items()}

    def vectors(self, ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 matrix) of the stored vectors (each record's first part), sorted by
        id; only `ids` when given. Empty (0 rows) when the index has no vectors."""
        if not self.has_vectors:
            return np.zeros(0, dtype=np.int64), np.zeros((0, self.dim), dtype=np.float32)
        sql = f"SELECT rowid, embedding FROM {self.name}_vec"
        rows: list[Row]
        if ids is None:
            rows = self.db.execute(sql).fetchall()
        else:
            rows = []
            for marks, part in id_lists(ids):
                rows += self.db.execute(f"{sql} WHERE rowid IN ({marks})", part).fetchall()
        rows.sort(key=lambda r: r[0])
        found = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        return found, matrix.reshape(len(rows), self.dim)

    def vector(
        self, qvec: np.ndarray, k: int, where: str | None = None, params: Sequence[object] = ()
    ) -> list[Hit]:
        """Nearest records by cosine distance (of their nearest part); each record once."""
        if not self.has_vectors or qvec is None or len(qvec) != self.dim:
            return []
        file = self.large_vector_file()
        if file is not None:
            found = file.knn(qvec, k, where, params)
            if found is not None:
                return [Hit(i, vec_rank=n, vec_distance=d) for n, (i, d) in enumerate(found, 1)]
        elif where is None and self._copy_pays():
            return self._vector_numpy(np.asarray(qvec, dtype=np.float32), k)
        # exact: sqlite-vec's scan (a filter, or a large index whose vector file is not ready)
        knn: list[Row] = self.db.execute(
            f"SELECT rowid, distance FROM {self.name}_vec WHERE embedding MATCH ? AND k = ?"
            f"{f' AND {where}' if where else ''} ORDER BY distance",
            (_blob(qvec), k, *params),
        ).fetchall()
        best: dict[int, float] = dict(knn)
        if self.db.scalar(f"SELECT 1 FROM {self.name}_vecpart LIMIT 1"):
            # `where` is a condition on `rowid`: name the record column so inside a subquery.
            for i, d in self.db.execute(
                f"SELECT rowid, d FROM (SELECT record AS rowid,"
                f" min(vec_distance_cosine(embedding, ?)) AS d FROM {self.name}_vecpart"
                f" GROUP BY record){f' WHERE {where}' if where else ''} ORDER BY d LIMIT ?",
                (_blob(qvec), *params, k),
            ):
                best[i] = min(d, best.get(i, d))
        rows = sorted(best.items(), key=lambda r: (r[1], r[0]))[:k]
        return [Hit(i, vec_rank=n, vec_distance=d) for n, (i, d) in enumerate(rows, 1)]

    def _copy_pays(self) -> bool:
        """Whether to search the in-process copy of every vector rather than sqlite-vec's scan.
        Loading the copy reads each vector through `vec0` (~50 µs a row: a second at 20k
        records) while a scan costs milliseconds, so the copy is loaded only once this process
        has searched the index `SCANS_BEFORE_COPY` times: a CLI call scans, a server (or a
        benchmark) soon searches its copy."""
        if self._matrix is not None:
            return True
        self._scans += 1
        return self._scans > SCANS_BEFORE_COPY

    def _load_matrix(self) -> _Matrix:
        version = (int(self.db.scalar("PRAGMA data_version")), self._writes)
        if self._matrix is not None and self._matrix.version == version:
            return self._matrix
        rows: list[Row] = self.db.execute(
            f"SELECT rowid, embedding FROM {self.name}_vec"
        ).fetchall()
        rows += self.db.execute(f"SELECT record, embedding FROM {self.name}_vecpart").fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
            len(rows), self.dim
        )
        order = np.argsort(ids, kind="stable")
        ids, matrix = ids[order], matrix[order]
        starts = None
        if len(ids) > 1 and bool((ids[1:] == ids[:-1]).any()):
            starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
            ids = ids[starts]
        self._matrix = _Matrix(version, ids, normalise(matrix), starts)
        return self._matrix

    def _vector_numpy(self, qvec: np.ndarray, k: int) -> list[Hit]:
        m = self._load_matrix()
        ids = m.ids
        if not len(ids):
            return []
        sims = m.rows @ qvec / max(float(np.linalg.norm(qvec)), 1e-12)
        if m.starts is not None:
            sims = np.maximum.reduceat(sims, m.starts)
        k = min(k, len(ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [
            Hit(int(ids[j]), vec_rank=n, vec_distance=float(1.0 - sims[j]))
            for n, j in enumerate(top, 1)
        ]

    def distances(self, qvec: np.ndarray, ids: Iterable[int]) -> dict[int, float]:
        """Cosine distance of each record (its nearest part) to `qvec`, from the in-process
        copy (a `rowid IN` lookup on `vec0` scans the table: ~400 ms at 100k records)."""
        ids = list(ids)
        if not self.has_vectors or not ids or len(qvec) != self.dim:
            return {}
        file = self.large_vector_file()
        if file is not None:
            return file.distances(qvec, ids)
        if not self._copy_pays():
            return exact_distances(self, qvec, ids)
        m = self._load_matrix()
        if not len(m.ids):
            return {}
        want = np.asarray(ids, dtype=np.int64)
        pos = np.clip(np.searchsorted(m.ids, want), 0, len(m.ids) - 1)
        known = m.ids[pos] == want
        q = np.asarray(qvec, dtype=np.float32) / max(float(np.linalg.norm(qvec)), 1e-12)
        found: dict[int, float] = {}
        for i, p, ok in zip(ids, pos.tolist(), known.tolist(), strict=True):
            if not ok:
                continue
            if m.starts is None:
                sim = float(m.rows[p] @ q)
            else:
                end = m.starts[p + 1] if p + 1 < len(m.starts) else len(m.rows)
                sim = float((m.rows[m.starts[p] : end] @ q).max())
            found[int(i)] = 1.0 - sim
        return found

    @staticmethod
    def stored_vectors(
        source: Readable, name: str
    ) -> tuple[tuple[str, int] | None, dict[int, np.ndarray]]:
        """The space (model id, dimension) and every record's vectors, shape (parts, dim), of
        index `name` in another database (`source`: an open connection, e.g. a damaged file
        being salvaged). ({}: no space bound there.) Database errors propagate: the caller
        decides what an unreadable table means."""
        space = source.execute(
            "SELECT model_id, dim FROM vector_spaces WHERE name = ?", (name,)
        ).fetchone()
        if space is None:
            return None, {}
        parts: dict[int, list[bytes]] = {
            int(i): [blob] for i, blob in source.execute(f"SELECT rowid, embedding FROM {name}_vec")
        }
        has_parts = source.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (f"{name}_vecpart",)
        ).fetchone()
        if has_parts:
            for i, blob in source.execute(
                f"SELECT record, embedding FROM {name}_vecpart ORDER BY record, part"
            ):
                if int(i) in parts:
                    parts[int(i)].append(blob)
        vectors = {
            i: np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
            for i, blobs in parts.items()
        }
        return (str(space[0]), int(space[1])), vectors
