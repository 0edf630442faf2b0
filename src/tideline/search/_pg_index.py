"""`PgTextIndex`: the index (`IndexBase`) on PostgreSQL — tsvector + GIN, substrings, pgvector
HNSW; `SqliteTextIndex`'s sibling.

For an index named `N` (in the namespace's schema):
- `N_text(rowid, tsv, body)`: `tsv` is `to_tsvector('simple', …)` over the terms of the same
  lexical analyser as SQLite's `N_fts` (`_analyse`: Snowball stems for English and Russian,
  jieba words for Chinese; or `plain`), diacritics removed as `unicode61` removes them, so a
  query matches what it matches on SQLite; a GIN index serves `@@`. `lexical_analysers` records
  the analyser (and the owner's keys label) as on SQLite, and `reanalyse` rebuilds `tsv`.
  `body` is the folded, casefolded text without diacritics: substring matches (SQLite's trigram
  table) are `strpos` on it. The bundled server has no pg_trgm, so this top-up scans the
  namespace's rows; it runs only when the tsvector finds too few.
- `N_vec(rowid, embedding vector(dim))` with an HNSW index (`vector_cosine_ops`), and
  `N_vecpart(record, part, embedding)` for long texts' later parts, created when the vector
  space is bound — the same layout and the same "nearest part" rule as on SQLite.
Ranks: `ts_rank` picks the tsvector list's candidates, over a bounded candidate set when the
query holds frequent words (`_ranked`); `term_counts` / `term_freqs` give `_lexical` the same
term statistics as FTS5 gives on SQLite (records holding a word through the GIN index, each
candidate's positions), so BM25, the lexical evidence and the relevance are the same numbers on
both engines. Cosine distance for vectors (the same numbers as sqlite-vec's). The fill
(`fill_vectors`), `search` and the query's cut are `IndexBase`'s; nothing is kept beside the
database (no vector or lexical file: the server's indexes serve).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from tideline.search._analyse import DEFAULT_ANALYSER, Analyser, analyse
from tideline.search._index_base import IndexBase, KeyLookup
from tideline.search._knn import FILTER_EXACT, FileSearch
from tideline.search._lexical import Counts, Freqs, positive_terms, term_key
from tideline.search._query import ParsedQuery
from tideline.search._terms import FTS_STRING, fts_strings, plain, tokens
from tideline.search._types import Hit
from tideline.store import Storage

#: `hnsw.ef_search`: the widest walk pgvector allows.
_EF_MAX = 1000
#: Term statistics (`term_counts`): from this many records the record count is PostgreSQL's
#: estimate and the mean record length a sample's (~`_SAMPLE` records), measured again when
#: the records moved by `_TOKENS_DRIFT`; terms whose record counts are kept, `_KNOWN_TERMS`.
_ESTIMATE_FROM = 50_000
_SAMPLE = 20_000
_TOKENS_DRIFT = 0.01
_KNOWN_TERMS = 20_000
#: `_check_stats`' answer serves the rest of the search that asked it, for at most this long.
_FRESH_S = 1.0


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


def _like(term: str) -> str:
    """`term` as a literal inside a LIKE pattern (escape character `\\`)."""
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


#: A stored vector read as pgvector's binary form (`vector_send`: dimension and a reserved
#: int16, then big-endian float4s) instead of its text: 12x less CPU and 7x less time per 1,000
#: vectors at 1M rows than parsing `[0.1,…]` (docs/benchmarks.md, "Issue 25, fourth pass").
_SENT = "vector_send(embedding)"


def _array(value: bytes) -> np.ndarray:
    """A stored vector as float32 numpy, from its `vector_send` bytes."""
    return np.frombuffer(value, dtype=">f4", offset=4).astype(np.float32)


def _occurrences(at: Mapping[str, set[int]], words: Sequence[str], prefix: bool) -> int:
    """How often the phrase `words` (its last word a prefix when `prefix`) is in a record whose
    lexemes are at the positions `at`."""
    if prefix:
        last = {p for lexeme, ps in at.items() if lexeme.startswith(words[-1]) for p in ps}
    else:
        last = at.get(words[-1], set())
    sets = [at.get(w, set()) for w in words[:-1]] + [last]
    return sum(1 for p in sets[0] if all(p + i in sets[i] for i in range(1, len(sets))))


def _tsquery_part(fts: str) -> list[tuple[str, str]]:
    """(SQL, parameter) for each FTS5 string in `fts`: the same phrase (or prefix) as a tsquery."""
    out = []
    for words, star in fts_strings(fts):
        if star:
            out.append(("to_tsquery('simple', ?)", " <-> ".join(f"'{w}'" for w in words) + ":*"))
        else:
            out.append(("phraseto_tsquery('simple', ?)", " ".join(words)))
    return out


def _tsquery(
    parsed: ParsedQuery, terms: Sequence[str] | None = None, joined: str = " || "
) -> tuple[str, list[object]] | None:
    """SQL for the tsquery of `parsed` (its terms OR-ed, minus the excluded), with parameters;
    `parsed.terms` are the analysed FTS5 strings SQLite's `N_fts` is asked for. `terms`: only
    these of them; `joined=" && "`: all of them."""
    positive = [p for t in (parsed.terms if terms is None else terms) for p in _tsquery_part(t)]
    if not positive:
        return None
    query = "(" + joined.join(sql for sql, _ in positive) + ")"
    params: list[object] = [v for _, v in positive]
    negative = _tsquery_part(parsed.exclude or "")
    if negative:
        query += " && !!(" + " || ".join(sql for sql, _ in negative) + ")"
        params += [v for _, v in negative]
    return query, params


def _best(row: tuple[int, float]) -> tuple[float, int]:
    """A ranked match's order: the best rank first, then the lowest id."""
    return (-row[1], row[0])


#: A term in more of the records than this is *frequent*: its matches are not all ranked.
FREQUENT_SHARE = 0.01
#: Matches of the whole query ranked, newest first, when the stages before found too few.
FREQUENT_SAMPLE = 1_000


class PgTextIndex(IndexBase):
    """`IndexBase` over PostgreSQL tables (see the module docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        self._features: PgFeatures | None = None
        #: `_shares`' lexeme frequencies and the ANALYZE they came from (the table's counts)
        self._lexeme_freqs: tuple[tuple[object, ...], dict[str, float]] | None = None
        self._trigram_index = False
        self._mean_length: tuple[int, float] | None = None  # (records then, tokens a record)
        self._analysed: tuple[object, ...] = ()  # `_check_stats`: the analyze counts
        self._fresh_until = 0.0  # `_check_stats` ran for the search under way until then
        super().__init__(db, name, analyser, keys)

    @staticmethod
    def create_tables(db: Storage, name: str) -> None:
        """The text table and its GIN index (idempotent); vectors come with `bind_vectors`.
        Every open calls this: once the table is there it takes no lock (DDL would)."""
        if db.table_exists(f"{name}_text") and db.table_exists("lexical_analysers"):
            return
        IndexBase._create_records(db)
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {name}_text(rowid BIGINT PRIMARY KEY,"
            " tsv tsvector NOT NULL, body TEXT NOT NULL)"
        )
        PgTextIndex._create_gin(db, name)

    @staticmethod
    def _create_gin(db: Storage, name: str) -> None:
        db.execute(f"CREATE INDEX IF NOT EXISTS {name}_text_tsv ON {name}_text USING gin (tsv)")

    @staticmethod
    def wanted_indexes(name: str, tables: Collection[str]) -> dict[str, str]:
        """The indexes (name: access method) the index `name` keeps, given its namespace's
        tables: GIN on the terms, HNSW on the vectors once bound (`tideline doctor`)."""
        wanted = {f"{name}_text_tsv": "gin"} if f"{name}_text" in tables else {}
        if f"{name}_vec" in tables:
            wanted[f"{name}_vec_ann"] = "hnsw"
        return wanted

    def restore_indexes(self) -> None:
        """Build whichever of `wanted_indexes` is missing (`tideline doctor --repair`)."""
        self._create_gin(self.db, self.name)
        if self.has_vectors:
            self.set_ann(True)

    # -- beside the database: nothing (the server's GIN and HNSW indexes serve) ---------------
    def lexical_source(self, keys: KeyLookup, ids: Callable[[], Sequence[int]]) -> None:
        """PostgreSQL keeps no lexical file: the owner's keys are not needed."""

    def build_lexical_file(self, guard: AbstractContextManager[object] | None = None) -> bool:
        return False

    def lexical_file_due(self) -> bool:
        return False

    def large_vector_file(self) -> FileSearch | None:
        return None

    def _stored_marker(self, wanted: str) -> str:
        stored = self.db.scalar(
            "SELECT analyser FROM lexical_analysers WHERE name = ?", (self.name,)
        )
        if stored is not None:
            return str(stored)
        self.db.execute(
            "INSERT INTO lexical_analysers(name, analyser) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (self.name, wanted),
        )
        return wanted

    def reanalyse(self, items: Iterable[tuple[int, str]]) -> int:
        """Rebuild every `tsv` from (id, lexical key) with the wanted analyser (one
        transaction; `body` and the vectors are untouched). Returns the records done."""
        analyser = cast(Analyser, self.wanted.split(";")[0])
        rows = [(plain(analyse(t, analyser)), int(i)) for i, t in items]
        with self.db.transaction():
            self.db.executemany(
                f"UPDATE {self.name}_text SET tsv = to_tsvector('simple', ?) WHERE rowid = ?",
                rows,
            )
            self.db.execute(
                "INSERT INTO lexical_analysers(name, analyser) VALUES (?, ?)"
                " ON CONFLICT (name) DO UPDATE SET analyser = excluded.analyser",
                (self.name, self.wanted),
            )
        self.made, self.analyser = self.wanted, analyser
        self._text_writes, self._mean_length, self._fresh_until = self._text_writes + 1, None, 0.0
        return len(rows)

    # -- vectors -------------------------------------------------------------------------------
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

    def text_ids(self) -> set[int]:
        return {r[0] for r in self.db.execute(f"SELECT rowid FROM {self.name}_text")}

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

    # -- writes --------------------------------------------------------------------------------
    def upsert_many(
        self, items: Sequence[tuple[int, str]], keys: Mapping[int, str] | None = None
    ) -> None:
        """(Re)index texts; `keys` gives a record the lexical key the tsvector is made of
        instead of its text (substrings and keyword checks keep the text)."""
        if not items:
            return
        keys = keys or {}
        rows = [
            (int(i), plain(analyse(keys.get(int(i), t), self.analyser)), plain(t)) for i, t in items
        ]
        with self.db.transaction():
            self.db.executemany(
                f"INSERT INTO {self.name}_text(rowid, tsv, body)"
                " VALUES (?, to_tsvector('simple', ?), ?)"
                " ON CONFLICT (rowid) DO UPDATE SET tsv = excluded.tsv, body = excluded.body",
                rows,
            )
        self._text_writes, self._fresh_until = self._text_writes + 1, 0.0

    def delete(self, rowids: Iterable[int]) -> None:
        ids = [int(i) for i in rowids]
        if not ids:
            return
        with self.db.transaction():
            self.db.execute(f"DELETE FROM {self.name}_text WHERE rowid = ANY(?)", (ids,))
            if self.has_vectors:
                self.db.execute(f"DELETE FROM {self.name}_vec WHERE rowid = ANY(?)", (ids,))
                self.db.execute(f"DELETE FROM {self.name}_vecpart WHERE record = ANY(?)", (ids,))
        self._text_writes, self._fresh_until = self._text_writes + 1, 0.0

    # -- reads ---------------------------------------------------------------------------------
    def _parsed(self, query: str | ParsedQuery) -> ParsedQuery | None:
        """The query as `IndexBase` cuts it, the statistics read first: once for this search
        (`_shares`, the counts and BM25 read them)."""
        self._check_stats()
        return super()._parsed(query)

    def _lexical(
        self,
        parsed: ParsedQuery,
        k: int,
        where: str | None,
        params: Sequence[object],
        trigram: Literal["top_up", "fallback"],
    ) -> list[Hit]:
        """The tsvector list, then substring matches, as on SQLite."""
        extra = f" AND {where}" if where else ""
        hits = [
            Hit(i, lex_rank=n, lex_score=r, lex_source="bm25")
            for n, (i, r) in enumerate(self._ranked(parsed, k, extra, params), 1)
        ]
        wanted = not hits if trigram == "fallback" else len(hits) < k
        terms = [plain(t) for t in parsed.verbatim]
        if wanted and terms:
            skip = [
                plain(b.replace('""', '"'))
                for b, _ in FTS_STRING.findall(parsed.exclude or "")
                if len(b) >= 3
            ]
            found = " + ".join("(strpos(body, ?) > 0)::int" for _ in terms)
            noneof = "".join(" AND strpos(body, ?) = 0" for _ in skip)
            if self._trigrams():  # `LIKE '%…%'` is what a trigram GIN index serves
                anyof = " OR ".join("body LIKE ? ESCAPE '\\'" for _ in terms)
                wanted_terms: list[str] = [f"%{_like(t)}%" for t in terms]
            else:  # no pg_trgm: a scan of the namespace's texts
                anyof = " OR ".join("strpos(body, ?) > 0" for _ in terms)
                wanted_terms = terms
            seen = {h.id for h in hits}
            rows = self.db.execute(
                f"SELECT rowid, {found} AS n FROM {self.name}_text"
                f" WHERE ({anyof}){noneof}{extra} ORDER BY n DESC, rowid LIMIT ?",
                (*terms, *wanted_terms, *skip, *params, k),
            ).fetchall()
            for r in rows:
                if r[0] not in seen and len(hits) < k:
                    hits.append(
                        Hit(
                            r[0],
                            lex_rank=len(hits) + 1,
                            lex_score=float(r[1]),
                            lex_source="trigram",
                        )
                    )
        return hits

    def _ranked(
        self, parsed: ParsedQuery, k: int, extra: str, params: Sequence[object]
    ) -> list[tuple[int, float]]:
        """The `k` best tsvector matches by `ts_rank` of the whole query, without ranking every
        match of a frequent word (`ts_rank` reads each match's tsvector: 2.2 s p50 at 200k
        turns when it ranked them all). Terms in over `FREQUENT_SHARE` of the records
        (PostgreSQL's statistics, `_shares`) are *frequent*; the matches of the others are
        ranked first (the GIN index gives only those), then the records holding every frequent
        term, then — only while fewer than `k` were found — the newest `FREQUENT_SAMPLE`
        matches of the whole query. A record that holds nothing but frequent words is ranked
        only from that bounded set: under BM25 (the pipeline's `rescore`) their weight is low.

        One statement (`_stages`): each stage a materialised CTE that runs only while the
        stages before it found fewer than `k` (a one-time filter on their counts, so a later
        stage's scan never starts otherwise); the same statement counts the records of the
        query's words whose counts `term_counts` does not know yet."""
        full = _tsquery(parsed)
        if full is None:
            return []
        frequent = self._frequent(parsed.terms)
        rare = [t for t in parsed.terms if t not in frequent]
        stages: list[tuple[tuple[str, list[object]], bool]]
        if not frequent:
            stages = [(full, False)]
        else:
            both = _tsquery(parsed, frequent, " && ") if len(frequent) > 1 else None
            stages = [(m, False) for m in (_tsquery(parsed, rare) if rare else None, both) if m]
            stages.append((full, True))
        todo = self._to_count(
            [w for t in positive_terms(parsed) for w in t.split()], self._stats_records()
        )
        sql, sql_params = self._stages(full, stages, k, extra, params, todo)
        rows = self.db.execute(sql, sql_params).fetchall()
        found: dict[int, float] = {}
        for stage in range(len(stages)):
            room = k - len(found)
            mine = sorted(((int(r[1]), float(r[2])) for r in rows if r[0] == stage), key=_best)
            found.update(mine[: max(room, 0)])
        for r in rows:
            if r[0] == -1:
                self._counted(todo, r[3])
        return sorted(found.items(), key=_best)[:k]

    def _stages(
        self,
        full: tuple[str, list[object]],
        stages: Sequence[tuple[tuple[str, list[object]], bool]],
        k: int,
        extra: str,
        params: Sequence[object],
        todo: Sequence[str],
    ) -> tuple[str, list[object]]:
        """`_ranked`'s statement: rows (stage, rowid, rank, NULL), and (-1, NULL, NULL, the
        record counts of `todo`) when there are words to count."""
        q, qparams = full
        text = f"{self.name}_text"
        ctes: list[str] = []
        values: list[object] = []
        for n, ((m, mparams), sample) in enumerate(stages):
            earlier = [f"s{j}" for j in range(n)]
            gate = (
                "(" + " + ".join(f"(SELECT count(*) FROM {e})" for e in earlier) + ") < ? AND "
                if earlier
                else ""
            )
            seen = "".join(f" AND rowid NOT IN (SELECT rowid FROM {e})" for e in earlier)
            where = f"WHERE {gate}tsv @@ ({m}){extra}{seen}"
            if sample:
                body = (
                    f"SELECT rowid, ts_rank(tsv, ({q})) AS r FROM (SELECT rowid, tsv FROM {text}"
                    f" {where} ORDER BY rowid DESC LIMIT ?) AS matched ORDER BY r DESC, rowid"
                    " LIMIT ?"
                )
            else:
                body = (
                    f"SELECT rowid, ts_rank(tsv, ({q})) AS r FROM {text} {where}"
                    " ORDER BY r DESC, rowid LIMIT ?"
                )
            ctes.append(f"s{n} AS MATERIALIZED ({body})")
            values += [*qparams, *([k] if earlier else []), *mparams, *params]
            values += [FREQUENT_SAMPLE, k] if sample else [k]
        picked = " UNION ALL ".join(
            f"SELECT {n} AS stage, rowid, r, NULL::bigint[] AS n FROM s{n}"
            for n in range(len(stages))
        )
        if todo:
            one = "phraseto_tsquery('simple', ?)"
            counts = ", ".join(f"count(*) FILTER (WHERE tsv @@ {one})" for _ in todo)
            anyof = " || ".join(one for _ in todo)
            picked += (
                f" UNION ALL SELECT -1, NULL, NULL, (SELECT ARRAY[{counts}] FROM {text}"
                f" WHERE tsv @@ ({anyof}))"
            )
            forms = [plain(w) for w in todo]
            values += [*forms, *forms]
        return f"WITH {', '.join(ctes)} {picked}", values

    def _frequent(self, terms: Sequence[str]) -> list[str]:
        """The single-word terms in over `FREQUENT_SHARE` of the records."""
        words = {t: t[1:-1] for t in terms if t.startswith('"') and t.endswith('"')}
        words = {t: w for t, w in words.items() if w and " " not in w and '""' not in w}
        share = self._shares(list(words.values())) if words else {}
        return [t for t, w in words.items() if share.get(w, 0.0) > FREQUENT_SHARE]

    def _many_records(self) -> bool:
        """PostgreSQL's statistics (`_shares`) only know the most common lexemes of a
        table ANALYZE has seen: enough to judge by."""
        return True

    def _check_stats(self) -> int:
        """One statement: the records of `N_text` and how often it was analysed — below
        `_ESTIMATE_FROM` records counted, from there PostgreSQL's own estimate
        (`pg_class.reltuples`, kept by autovacuum / ANALYZE; a count scans the table). Each
        lexical search asks it once, and the rest of that search (`_shares`, `term_counts`)
        reads the answer: the lexeme statistics are read again after another ANALYZE, the
        terms' record counts (`_records_with`) forgotten when the records moved (or after a
        write through this handle, below the estimate)."""
        row = self.db.execute(
            "SELECT c.reltuples, pg_stat_get_analyze_count(c.oid),"
            " pg_stat_get_autoanalyze_count(c.oid),"
            f" CASE WHEN c.reltuples < ? THEN (SELECT count(*) FROM {self.name}_text) END"
            " FROM pg_class c WHERE c.oid = to_regclass(?)",
            (_ESTIMATE_FROM, f"{self.name}_text"),
        ).fetchone()
        estimate, analysed, autoanalysed, counted = row if row is not None else (0, 0, 0, 0)
        if counted is None:
            records, writes = int(float(estimate)), -1  # counts kept until the estimate moves
        else:
            records, writes = int(counted), self._text_writes
        version = (records, writes)
        if self._count is None or self._count[0] != version:
            self._count = (version, records)
            self._records_with.clear()
        self._analysed = (analysed, autoanalysed)
        self._fresh_until = time.monotonic() + _FRESH_S
        return records

    @property
    def _fresh(self) -> bool:
        return time.monotonic() < self._fresh_until

    def _stats_records(self) -> int:
        """Records in `N_text` for the term statistics: as the lexical list of this search
        found them (`_check_stats`), else asked now."""
        if self._fresh and self._count is not None:
            return self._count[1]
        return self._check_stats()

    def _stats_tokens(self, records: int) -> int:
        """Tokens in `N_text` (each record's positions in its tsvector: FTS5's column size),
        as `records` × their mean length. The mean is measured again once the records moved by
        `_TOKENS_DRIFT` since: exactly on a table below `_ESTIMATE_FROM`, on a block sample of
        ~`_SAMPLE` records above (the whole table would be unnested)."""
        at, mean = self._mean_length or (-1, 0.0)
        if at < 0 or abs(records - at) > _TOKENS_DRIFT * max(at, 1):
            sample = (
                f" TABLESAMPLE SYSTEM ({min(100.0, 100.0 * _SAMPLE / records):.4f})"
                if records >= _ESTIMATE_FROM
                else ""
            )
            row = self.db.execute(
                "SELECT count(*), coalesce(sum((SELECT sum(cardinality(u.positions))"
                f" FROM unnest(t.tsv) u)), 0) FROM {self.name}_text t{sample}"
            ).fetchone()
            counted, tokens = (int(row[0]), int(row[1])) if row else (0, 0)
            mean = tokens / counted if counted else 0.0
            self._mean_length = (records, mean)
        return round(records * mean)

    def term_counts(self, terms: Sequence[str]) -> Counts | None:
        """The records, their tokens and the records holding each word of `terms`, as on
        SQLite (BM25 over several indexes, `_lexical`): a word's records are counted by the
        GIN index (`@@`), every word of a query in one pass — in the lexical list's own
        statement when it ran (`_ranked`) — and kept until the index changes
        (`_check_stats`). From `_ESTIMATE_FROM` records a frequent word's (`FREQUENT_SHARE`,
        PostgreSQL's statistics) are its share of the estimate: counting them reads each
        match, the cost `_ranked` avoids."""
        words = list(dict.fromkeys(w for t in terms for w in t.split()))
        records = self._stats_records()
        todo = self._to_count(words, records)
        if todo:
            one = "phraseto_tsquery('simple', ?)"
            counts = ", ".join(f"count(*) FILTER (WHERE tsv @@ {one})" for _ in todo)
            anyof = " || ".join(one for _ in todo)
            forms = [plain(w) for w in todo]
            row = self.db.execute(
                f"SELECT ARRAY[{counts}] FROM {self.name}_text WHERE tsv @@ ({anyof})",
                (*forms, *forms),
            ).fetchone()
            self._counted(todo, row[0] if row else None)
        self._fresh_until = 0.0  # the next search asks again
        return Counts(
            records, self._stats_tokens(records), {w: self._records_with.get(w, 0) for w in words}
        )

    def _to_count(self, words: Sequence[str], records: int) -> list[str]:
        """Of `words`, those whose records must be counted: not known yet, and — from
        `_ESTIMATE_FROM` records — not frequent (a frequent word's count is set here, its share
        of the estimate)."""
        todo = [w for w in dict.fromkeys(words) if w not in self._records_with and tokens(w)]
        if todo and records >= _ESTIMATE_FROM:
            share = self._shares(todo)
            frequent = {
                w: round(share[w] * records) for w in todo if share.get(w, 0.0) > FREQUENT_SHARE
            }
            self._records_with.update(frequent)
            todo = [w for w in todo if w not in frequent]
        return todo

    def _counted(self, todo: Sequence[str], counts: Sequence[int] | None) -> None:
        """Keep the records counted for `todo` (in its order)."""
        if len(self._records_with) > _KNOWN_TERMS:
            self._records_with.clear()
        values = [int(n) for n in counts] if counts else [0] * len(todo)
        self._records_with.update(zip(todo, values, strict=True))

    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        """Each of these records' length in tokens and how often it holds each of the query's
        terms (a phrase: its words at consecutive positions), from the tsvector's positions,
        for the records among `ids` the query matches — what FTS5's `tideline_tf` gives on
        SQLite. (A tsvector keeps at most 256 positions of a word: a longer record's count
        stops there.)"""
        ts = _tsquery(parsed)
        phrases = [
            (key, tokens(key), t.endswith("*")) for t in parsed.terms if (key := term_key(t))
        ]
        phrases = [p for p in phrases if p[1]]
        if ts is None or not ids or not phrases:
            return {}
        exact = sorted({w for _, words, star in phrases for w in (words[:-1] if star else words)})
        prefixes = sorted({_like(words[-1]) + "%" for _, words, star in phrases if star})
        wanted = "u.lexeme = ANY(?::text[]) OR u.lexeme LIKE ANY(?::text[])"
        q, qparams = ts
        rows = self.db.execute(
            "SELECT t.rowid, (SELECT coalesce(sum(cardinality(u.positions)), 0)"
            " FROM unnest(t.tsv) u), ARRAY(SELECT u.lexeme || ':' || array_to_string(u.positions,"
            f" ',') FROM unnest(t.tsv) u WHERE {wanted}) FROM {self.name}_text t"
            f" WHERE t.rowid = ANY(?) AND t.tsv @@ ({q})",
            (exact, prefixes, [int(i) for i in ids], *qparams),
        ).fetchall()
        out: dict[int, Freqs] = {}
        for rowid, length, packed in rows:
            at: dict[str, set[int]] = {}
            for item in packed:
                lexeme, _, positions = str(item).rpartition(":")
                at[lexeme] = {int(p) for p in positions.split(",") if p}
            tf: dict[str, int] = {}
            for key, words, star in phrases:
                n = _occurrences(at, words, star)
                if n:
                    tf[key] = tf.get(key, 0) + n
            out[int(rowid)] = (int(length), tf)
        return out

    def _shares(self, words: Sequence[str]) -> dict[str, float]:
        """The share of the records that hold each term, from PostgreSQL's own statistics of
        `tsv` (its most common lexemes, kept by ANALYZE / autovacuum): a term in more than half
        of the records is dropped from a query as on SQLite. No statistics yet: none dropped.
        The statistics (up to thousands of lexemes) are read again only after another ANALYZE
        (`_check_stats`' analyze counts): a search asks for them several times (ranking and
        counting), ~4 ms each at 1M turns (docs/benchmarks.md, "Issue 25, fourth pass")."""
        table = f"{self.name}_text"
        if not self._fresh:
            self._check_stats()
        version = self._analysed
        if self._lexeme_freqs is None or self._lexeme_freqs[0] != version or None in version:
            row = self.db.execute(
                "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats"
                " WHERE schemaname = current_schema() AND tablename = ? AND attname = 'tsv'",
                (table,),
            ).fetchone()
            found: dict[str, float] = {}
            if row is not None and row[0] is not None:  # the freqs end with min, max, nulls
                found = {w: float(f) for w, f in zip(row[0], row[1], strict=False)}
            self._lexeme_freqs = (version, found)
        freqs = self._lexeme_freqs[1]
        return {w: freqs[plain(w)] for w in words if plain(w) in freqs}

    def vector(
        self, qvec: np.ndarray, k: int, where: str | None = None, params: Sequence[object] = ()
    ) -> list[Hit]:
        """Nearest records by cosine distance (of their nearest part); each record once. With
        no filter the HNSW index answers; a filter is applied inside the same query, and
        `k` records come back whenever `k` pass it (`_nearest`)."""
        if not self.has_vectors or qvec is None or len(qvec) != self.dim:
            return []
        q = np.asarray(qvec, dtype=np.float32)
        cond = f" WHERE {where}" if where else ""
        best = self._nearest(q, k, cond, params)
        rows = sorted(best.items(), key=lambda r: (r[1], r[0]))[:k]
        return [Hit(i, vec_rank=n, vec_distance=float(d)) for n, (i, d) in enumerate(rows, 1)]

    def _nearest(
        self, q: np.ndarray, k: int, cond: str, params: Sequence[object]
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
        from there means fewer than `k` records meet the filter."""
        parts = (
            f"(SELECT 1, NULL::bigint, rowid, d FROM (SELECT record AS rowid,"
            f" min(embedding <=> ?) AS d FROM {self.name}_vecpart GROUP BY record) p{cond}"
            " ORDER BY d LIMIT ?)"
        )
        part_params = (q, *params, k)
        ef = min(_EF_MAX, self.options.ef(k))
        iterative = bool(cond) and self.server().iterative_scan
        if cond:  # exact when few pass: `n` says how many did (up to `FILTER_EXACT`)
            first = (
                f"WITH scanned AS MATERIALIZED (SELECT rowid, embedding <=> ? AS d FROM"
                f" {self.name}_vec{cond} LIMIT ?) (SELECT 0, (SELECT count(*) FROM scanned),"
                f" rowid, d FROM scanned ORDER BY d LIMIT ?) UNION ALL {parts}"
            )
            first_params: tuple[object, ...] = (q, *params, FILTER_EXACT, k, *part_params)
        else:
            walk, walk_params = self._walk(q, k, cond, params, ef, iterative)
            first = f"(SELECT 0, NULL::bigint, rowid, d FROM ({walk}) w) UNION ALL {parts}"
            first_params = (*walk_params, *part_params)
        rows = self.db.execute(first, first_params).fetchall()
        best: dict[int, float] = {}
        for r in rows:
            if r[0] == 1:
                best[int(r[2])] = min(float(r[3]), best.get(int(r[2]), float(r[3])))
        main = [(int(r[2]), float(r[3])) for r in rows if r[0] == 0]
        passing = next((int(r[1]) for r in rows if r[0] == 0), 0) if cond else 0
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

    def _trigrams(self) -> bool:
        """Substrings through a trigram index: pg_trgm is there and `N_text` has the index
        (built on first use; a build another process started is waited for by the DDL)."""
        if not self._trigram_index and self.server().trigram:
            if not self.db.scalar(
                "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?",
                (f"{self.name}_text_trgm",),
            ):
                self.db.execute(
                    f"CREATE INDEX IF NOT EXISTS {self.name}_text_trgm ON {self.name}_text"
                    " USING gin (body gin_trgm_ops)"
                )
            self._trigram_index = True
        return self._trigram_index

    def server(self) -> PgFeatures:
        """What this server's extensions offer, read once (see `PgFeatures`)."""
        if self._features is None:
            self._features = PgFeatures.read(self.db)
        return self._features

    def _stored_matches(self, parsed: ParsedQuery, ids: Sequence[int]) -> set[int]:
        """`keyword_matches` by `strpos` on the folded texts of `ids`."""
        terms = [plain(t) for t in parsed.verbatim]
        every = "".join(" AND strpos(body, ?) > 0" for _ in terms)
        rows = self.db.execute(
            f"SELECT rowid FROM {self.name}_text WHERE rowid = ANY(?){every}",
            ([int(i) for i in ids], *terms),
        )
        return {r[0] for r in rows}

    def containing(self, parsed: ParsedQuery) -> list[int]:
        """Every record whose text contains each typed term (3+ chars) verbatim, by id."""
        terms = [plain(t) for t in parsed.verbatim]
        if not terms:
            return []
        every = " AND ".join("strpos(body, ?) > 0" for _ in terms)
        rows = self.db.execute(
            f"SELECT rowid FROM {self.name}_text WHERE {every} ORDER BY rowid", terms
        )
        return [int(r[0]) for r in rows]

    def distances(self, qvec: np.ndarray, ids: Iterable[int]) -> dict[int, float]:
        ids = [int(i) for i in ids]
        if not self.has_vectors or not ids or len(qvec) != self.dim:
            return {}
        q = np.asarray(qvec, dtype=np.float32)
        found: dict[int, float] = {}
        for i, d in self.db.execute(
            f"SELECT rowid, embedding <=> ? FROM {self.name}_vec WHERE rowid = ANY(?) UNION ALL"
            f" SELECT record, embedding <=> ? FROM {self.name}_vecpart WHERE record = ANY(?)",
            (q, ids, q, ids),
        ):
            found[i] = min(float(d), found.get(i, float(d)))
        return found
