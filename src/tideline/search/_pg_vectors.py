"""`PgVectors`: the vectors of a PostgreSQL index — a layer of `PgTextIndex` (`_pg_index`),
above its term statistics (`_pg_terms`).

`N_vec(rowid, embedding vector(dim))` with an HNSW index (`vector_cosine_ops`), and
`N_vecpart(record, part, embedding)` for long texts' later parts, created when the vector space is
bound (`bind_vectors`) — the same layout and the same "nearest part" rule as on SQLite
(`_sqlite_vectors`), and the same cosine distances as sqlite-vec's. Vectors are read in pgvector's
binary form (`_SENT`). KNN is one statement unless a filtered walk comes back short (`_nearest`);
what the server's extensions offer (pgvector's iterative scans, pg_trgm) is read once
(`PgFeatures`).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tideline.search._analyse import DEFAULT_ANALYSER, Analyser
from tideline.search._hits import Hit
from tideline.search._knn import FILTER_EXACT
from tideline.search._lexical import Freqs
from tideline.search._pg_terms import PgTerms, _freqs
from tideline.search._query import ParsedQuery
from tideline.store import Storage

#: `hnsw.ef_search`: the widest walk pgvector allows.
_EF_MAX = 1000
#: What a vector statement read ahead (`_Ahead`) serves its search for at most this long.
_AHEAD_S = 1.0


@dataclass(frozen=True)
class _Ahead:
    """What one search's vector statement read ahead of its next questions (`_nearest`): the
    lexical candidates' distances to the query (`vector`'s `q`, as bytes) and every
    candidate's term frequencies for the search's query. A question about other ids, another
    query or vector, or after `until` (or a write) asks the server as before."""

    parsed: ParsedQuery
    q: bytes
    near_ids: set[int]
    near: dict[int, float]
    freq_ids: set[int]
    freqs: dict[int, Freqs]
    until: float


@dataclass(frozen=True)
class PgFeatures:
    """What the server's extensions offer, detected at run time: pgvector's version (iterative
    index scans came in 0.8) and pg_trgm (a trigram GIN index for substring matches). The
    bundled pgserver build has pgvector 0.6.2 and no pg_trgm: its fallbacks are what the tests
    run; docs/postgresql.md says what a newer server gains."""

    pgvector: tuple[int, ...]
    trigram: bool

    @property
    def iterative_scan(self) -> bool:
        return self.pgvector >= (0, 8)

    @classmethod
    def read(cls, db: Storage) -> PgFeatures:
        version = db.scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        parts = tuple(int(p) for p in re.findall(r"\d+", str(version or ""))[:3])
        trigram = bool(db.scalar("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'"))
        if not trigram and db.scalar(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'"
        ):
            try:
                with db.transaction():
                    db.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
                trigram = True
            except Exception:  # no privilege to create it: substrings scan, as without it
                trigram = False
        return cls(parts, trigram)


#: A stored vector read as pgvector's binary form (`vector_send`: dimension and a reserved
#: int16, then big-endian float4s) instead of its text: 12x less CPU and 7x less time per 1,000
#: vectors at 1M rows than parsing `[0.1,…]` (docs/benchmarks.md, "Issue 25, fourth pass").
_SENT = "vector_send(embedding)"


def _array(value: bytes) -> np.ndarray:
    """A stored vector as float32 numpy, from its `vector_send` bytes."""
    return np.frombuffer(value, dtype=">f4", offset=4).astype(np.float32)


class PgVectors(PgTerms):
    """The vectors of a PostgreSQL index and their nearest-neighbour search (see the module
    docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        self._features: PgFeatures | None = None
        #: per thread: `ahead` (the lexical list to read ahead for), `got` (`_Ahead`)
        self._local = threading.local()
        super().__init__(db, name, analyser, keys)

    def server(self) -> PgFeatures:
        """What this server's extensions offer, read once (see `PgFeatures`)."""
        if self._features is None:
            self._features = PgFeatures.read(self.db)
        return self._features

    def bind_vectors(self, model_id: str, dim: int) -> bool:
        """Make `N_vec` hold vectors of this model. Returns True when old vectors were dropped."""
        if dim <= 0 or (self.model_id == model_id and self.dim == dim):
            return False
        with self.db.transaction():
            self.db.lock(f"index:{self.name}")
            row = self.db.one(
                "SELECT model_id, dim FROM vector_spaces WHERE name = ?", (self.name,)
            )
            if row and (row["model_id"], row["dim"]) == (model_id, dim):
                self.model_id, self.dim = model_id, dim
                return False
            dropped = row is not None
            for table in ("vec", "vecpart"):
                self.db.execute(f"DROP TABLE IF EXISTS {self.name}_{table}")
            self.db.execute(
                f"CREATE TABLE {self.name}_vec(rowid BIGINT PRIMARY KEY,"
                f" embedding vector({int(dim)}) NOT NULL)"
            )
            self.db.execute(
                f"CREATE TABLE {self.name}_vecpart(record BIGINT NOT NULL, part INTEGER NOT NULL,"
                f" embedding vector({int(dim)}) NOT NULL, PRIMARY KEY (record, part))"
            )
            self.set_ann(True)
            self.db.execute(
                "INSERT INTO vector_spaces(name, model_id, dim) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET model_id = excluded.model_id,"
                " dim = excluded.dim",
                (self.name, model_id, dim),
            )
        self.model_id, self.dim = model_id, dim
        return dropped

    def pause_ann(self) -> bool:
        self.set_ann(False)
        return True

    def set_ann(self, enabled: bool) -> None:
        """Build (or drop) the HNSW index on `N_vec`; without it KNN is an exact scan
        (the benchmark compares both)."""
        if enabled:
            self.db.execute(
                f"CREATE INDEX IF NOT EXISTS {self.name}_vec_ann ON {self.name}_vec"
                " USING hnsw (embedding vector_cosine_ops)"
            )
        else:
            self.db.execute(f"DROP INDEX IF EXISTS {self.name}_vec_ann")

    def set_vectors(self, items: Iterable[tuple[int, np.ndarray]]) -> None:
        """Store each record's vector: shape (dim,), or (parts, dim) for a text cut in parts."""
        if not self.has_vectors:
            return
        firsts: list[tuple[int, np.ndarray]] = []
        rest: list[tuple[int, int, np.ndarray]] = []
        for i, v in items:
            parts = np.asarray(v, dtype=np.float32).reshape(-1, self.dim)
            firsts.append((int(i), parts[0]))
            rest += [(int(i), n, p) for n, p in enumerate(parts[1:], 1)]
        ids = [i for i, _ in firsts]
        self._forget_ahead()
        with self.db.transaction():
            self.db.execute(f"DELETE FROM {self.name}_vecpart WHERE record = ANY(?)", (ids,))
            self.db.executemany(
                f"INSERT INTO {self.name}_vec(rowid, embedding) VALUES (?, ?)"
                " ON CONFLICT (rowid) DO UPDATE SET embedding = excluded.embedding",
                firsts,
            )
            self.db.executemany(
                f"INSERT INTO {self.name}_vecpart(record, part, embedding) VALUES (?, ?, ?)", rest
            )

    def vectors_of(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Each record's vectors, shape (parts, dim)."""
        if not self.has_vectors or not ids:
            return {}
        wanted = [int(i) for i in ids]
        out: dict[int, list[np.ndarray]] = {}
        for i, v in self.db.execute(
            f"SELECT rowid, {_SENT} FROM {self.name}_vec WHERE rowid = ANY(?)", (wanted,)
        ):
            out[i] = [_array(v)]
        for i, v in self.db.execute(
            f"SELECT record, {_SENT} FROM {self.name}_vecpart WHERE record = ANY(?)"
            " ORDER BY record, part",
            (wanted,),
        ):
            if i in out:
                out[i].append(_array(v))
        return {i: np.stack(v) for i, v in out.items()}

    def vectors(self, ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 matrix) of each record's first vector, sorted by id."""
        if not self.has_vectors:
            return np.zeros(0, dtype=np.int64), np.zeros((0, self.dim), dtype=np.float32)
        sql = f"SELECT rowid, {_SENT} FROM {self.name}_vec"
        rows = (
            self.db.execute(f"{sql} ORDER BY rowid").fetchall()
            if ids is None
            else self.db.execute(
                f"{sql} WHERE rowid = ANY(?) ORDER BY rowid", ([int(i) for i in ids],)
            ).fetchall()
        )
        found = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = np.array([_array(r[1]) for r in rows], dtype=np.float32)
        return found, matrix.reshape(len(rows), self.dim)

    def vector(
        self, qvec: np.ndarray, k: int, where: str | None = None, params: Sequence[object] = ()
    ) -> list[Hit]:
        """Nearest records by cosine distance (of their nearest part); each record once. With
        no filter the HNSW index answers; a filter is applied inside the same query, and
        `k` records come back whenever `k` pass it (`_nearest`). After this thread's lexical
        list of the same search (`_expect`), the same statement reads ahead what the search
        asks next of these candidates (`_Ahead`)."""
        ahead, self._local.ahead = getattr(self._local, "ahead", None), None
        self._local.got = None
        if not self.has_vectors or qvec is None or len(qvec) != self.dim:
            return []
        q = np.asarray(qvec, dtype=np.float32)
        cond = f" WHERE {where}" if where else ""
        best = self._nearest(q, k, cond, params, ahead)
        rows = sorted(best.items(), key=lambda r: (r[1], r[0]))[:k]
        return [Hit(i, vec_rank=n, vec_distance=float(d)) for n, (i, d) in enumerate(rows, 1)]

    def _expect(self, parsed: ParsedQuery | None, ids: Sequence[int]) -> None:
        """This thread's lexical list of a search: its query and candidates, for the vector
        statement to read ahead for (None: nothing to read ahead)."""
        self._local.ahead = None if parsed is None else (parsed, [int(i) for i in ids])
        self._local.got = None

    def _forget_ahead(self) -> None:
        """A write: nothing read ahead is served any more."""
        self._local.ahead = self._local.got = None

    def _read(self) -> _Ahead | None:
        got: _Ahead | None = getattr(self._local, "got", None)
        return got if got is not None and time.monotonic() < got.until else None

    def _nearest(
        self,
        q: np.ndarray,
        k: int,
        cond: str,
        params: Sequence[object],
        ahead: tuple[ParsedQuery, list[int]] | None = None,
    ) -> dict[int, float]:
        """The `k` nearest records that meet `cond` (by their first vector, or a later part's:
        `N_vecpart`, scanned), id → distance; one statement unless a filtered walk comes back
        short.

        The HNSW walk is `options.ef(k)` wide (the setting, or chosen from `k`), set for that
        statement alone (`_walk`). A filter that passes fewer than `FILTER_EXACT` rows is
        answered exactly: its rows' distances are computed once, in the statement that counts
        them (cheaper than a walk that must pass over the rest, and exact). A wider filter
        walks the graph: with pgvector ≥ 0.8 the scan goes on until `k` rows pass
        (`hnsw.iterative_scan`); before 0.8 the walk finds `hnsw.ef_search` candidates and the
        filter then drops those it rejects, so a short answer is asked again with a walk
        widened by what the last one let through (up to pgvector's 1,000), then exactly: short
        from there means fewer than `k` records meet the filter.

        `ahead` (the lexical list's query and candidates): the first statement also gives the
        distances of those candidates and the term frequencies (`term_freqs`) of every
        candidate of both lists, kept for this thread (`_read`): the search's next two
        statements were those."""
        parts = (
            f"p AS MATERIALIZED (SELECT rowid, d FROM (SELECT record AS rowid,"
            f" min(embedding <=> ?) AS d FROM {self.name}_vecpart GROUP BY record) p{cond}"
            " ORDER BY d LIMIT ?)"
        )
        part_params = (q, *params, k)
        ef = min(_EF_MAX, self.options.ef(k))
        iterative = bool(cond) and self.server().iterative_scan
        if cond:  # exact when few pass: `n` says how many did (up to `FILTER_EXACT`)
            ctes = (
                f"scanned AS MATERIALIZED (SELECT rowid, embedding <=> ? AS d FROM"
                f" {self.name}_vec{cond} LIMIT ?), m AS MATERIALIZED (SELECT rowid, d"
                f" FROM scanned ORDER BY d LIMIT ?), {parts}"
            )
            cte_params: tuple[object, ...] = (q, *params, FILTER_EXACT, k, *part_params)
            passed = "(SELECT count(*) FROM scanned)"
        else:
            walk, walk_params = self._walk(q, k, cond, params, ef, iterative)
            ctes = f"m AS MATERIALIZED ({walk}), {parts}"
            cte_params = (*walk_params, *part_params)
            passed = "NULL::bigint"
        first = (
            f"WITH {ctes} SELECT 0, {passed}, rowid, d, NULL::bigint, NULL::text[] FROM m"
            " UNION ALL SELECT 1, NULL, rowid, d, NULL, NULL FROM p"
        )
        first_params: list[object] = list(cte_params)
        freqs = self._freqs_sql(ahead[0]) if ahead is not None else None
        if ahead is not None:
            lexed = ahead[1]
            first += (
                f" UNION ALL SELECT 2, NULL, rowid, embedding <=> ?, NULL, NULL FROM {self.name}_vec"
                " WHERE rowid = ANY(?) UNION ALL SELECT 2, NULL, record, embedding <=> ?, NULL,"
                f" NULL FROM {self.name}_vecpart WHERE record = ANY(?)"
            )
            first_params += [q, lexed, q, lexed]
            if freqs is not None:
                sql, fparams, _ = freqs
                sql = sql.replace(
                    "{ids}",
                    # an array, not `IN (…)`: the walk's row count is unknown to the planner,
                    # which then scanned every tsvector (270 ms at 300k) instead of the keys
                    "= ANY(ARRAY(SELECT rowid FROM m UNION SELECT rowid FROM p"
                    " UNION SELECT unnest(?::bigint[])))",
                )
                first += (
                    " UNION ALL SELECT 3, NULL, f.rowid, NULL, f.length, f.packed"
                    f" FROM ({sql}) AS f(rowid, length, packed)"
                )
                first_params += [*fparams[:2], lexed, *fparams[2:]]
        rows = self.db.execute(first, first_params).fetchall()
        best: dict[int, float] = {}
        for r in rows:
            if r[0] == 1:
                best[int(r[2])] = min(float(r[3]), best.get(int(r[2]), float(r[3])))
        main = [(int(r[2]), float(r[3])) for r in rows if r[0] == 0]
        passing = next((int(r[1]) for r in rows if r[0] == 0), 0) if cond else 0
        if ahead is not None:
            near: dict[int, float] = {}
            for r in rows:
                if r[0] == 2:
                    near[int(r[2])] = min(float(r[3]), near.get(int(r[2]), float(r[3])))
            candidates = {i for i, _ in main} | set(best) | set(ahead[1])
            self._local.got = _Ahead(
                ahead[0],
                q.tobytes(),
                set(ahead[1]),
                near,
                candidates if freqs is not None else set(),
                _freqs([(r[2], r[4], r[5]) for r in rows if r[0] == 3], freqs[2])
                if freqs is not None
                else {},
                time.monotonic() + _AHEAD_S,
            )
        if cond and passing >= FILTER_EXACT:  # too many pass for an exact answer: walk
            main = []
            while True:
                walk, walk_params = self._walk(q, k, cond, params, ef, iterative)
                main = [(int(i), float(d)) for i, d in self.db.execute(walk, walk_params)]
                if len(main) >= k or ef >= _EF_MAX:
                    break
                ef = min(_EF_MAX, max(2 * ef, math.ceil(1.5 * ef * k / max(1, len(main)))))
        if (cond and passing >= FILTER_EXACT and len(main) < k) or (not cond and ef < k):
            exact = (
                f"SELECT rowid, d FROM (SELECT rowid, embedding <=> ? AS d FROM {self.name}_vec"
                f"{cond} OFFSET 0) AS scanned ORDER BY d LIMIT ?"
            )
            main = [(int(i), float(d)) for i, d in self.db.execute(exact, (q, *params, k))]
        for i, d in main:
            best[i] = min(d, best.get(i, d))
        return best

    def _walk(
        self,
        q: np.ndarray,
        k: int,
        cond: str,
        params: Sequence[object],
        ef: int,
        iterative: bool,
    ) -> tuple[str, tuple[object, ...]]:
        """The HNSW walk `ef` wide as one statement: `set_config(…, true)` in a row the walk
        depends on (LATERAL), so the setting is made before the index scan starts and holds
        for this statement's transaction only — no `SET LOCAL` statement, no transaction."""
        settings = "set_config('hnsw.ef_search', ?, true)"
        values: list[object] = [str(int(ef))]
        if iterative:
            settings += " || set_config('hnsw.iterative_scan', 'relaxed_order', true)"
        sql = (
            f"SELECT w.rowid, w.d FROM (SELECT {settings} AS s) AS walk, LATERAL"
            f" (SELECT rowid, embedding <=> ? AS d FROM {self.name}_vec{cond}"
            " ORDER BY embedding <=> ? LIMIT ? + 0 * length(walk.s)) AS w"
        )
        return sql, (*values, q, *params, q, k)

    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        got = self._read()
        if got is not None and got.parsed == parsed and got.freq_ids.issuperset(ids):
            return {i: got.freqs[i] for i in ids if i in got.freqs}
        return super().term_freqs(parsed, ids)

    def distances(self, qvec: np.ndarray, ids: Iterable[int]) -> dict[int, float]:
        ids = [int(i) for i in ids]
        if not self.has_vectors or not ids or len(qvec) != self.dim:
            return {}
        q = np.asarray(qvec, dtype=np.float32)
        got = self._read()
        if got is not None and got.q == q.tobytes() and got.near_ids.issuperset(ids):
            return {i: got.near[i] for i in ids if i in got.near}
        found: dict[int, float] = {}
        for i, d in self.db.execute(
            f"SELECT rowid, embedding <=> ? FROM {self.name}_vec WHERE rowid = ANY(?) UNION ALL"
            f" SELECT record, embedding <=> ? FROM {self.name}_vecpart WHERE record = ANY(?)",
            (q, ids, q, ids),
        ):
            found[i] = min(float(d), found.get(i, float(d)))
        return found
