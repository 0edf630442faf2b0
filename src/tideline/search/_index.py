"""`SqliteTextIndex` (`TextIndex`): the index (`IndexBase`) of one kind of record in one SQLite
database.

For an index named `N` over records with integer ids:
- `N_fts`  FTS5, `unicode61` with diacritics removed, over the text as the lexical analyser
  (`_analyse`) cuts it: Snowball stems, jieba words (or, `plain`, CJK characters spaced): BM25;
  `lexical_analysers` records which analyser made it (and the owner's `keys` label when the
  owner indexes a lexical key other than the text: raw turns add their neighbours and date), so
  queries are cut the same way; an index made otherwise than the owner wants is `stale` until
  the owner calls `reanalyse` (meanwhile queries keep using the old analyser: results stay right);
- `N_terms(id, tokens)`: each record of `N_fts` as FTS5 tokenized it (space-separated), so
  `term_freqs` counts the query's phrases in the candidates by rowid instead of FTS5 walking
  every match of the query's words; `lexical_terms` names the indexes whose `N_terms` holds
  every record of `N_fts` (made empty, or since `reanalyse`: an older index counts by the walk);
- `N_tri`  FTS5 `trigram`: substrings, partial words, verbatim keyword checks;
- `N_vec`  sqlite-vec `vec0`, cosine distance, created when the first vector arrives: the vector
  of each record's first part, keyed by the record id;
- `N_vecpart(record, part, embedding)`: the vectors of parts 1, 2, … of records whose text is
  longer than the model's input limit (see `tideline.embed.embed_parts`). A record is as near as
  its nearest part, so KNN takes the best part per record and returns each record once.
A record has a vector when `N_vec` has its row (all its parts are written in one transaction);
`vector_ids` says which records have one (owners compare with their ids); `fill_vectors`
(`IndexBase`'s) gives them theirs.
The FTS tables are contentless (the owner table keeps the text), so the index costs little space.
Unfiltered KNN runs on an in-process numpy copy of both vector tables (a matrix product over 100k
vectors takes a few ms, sqlite-vec's scan ~60 ms here); the copy reloads when this object writes or
`PRAGMA data_version` shows another connection committed. Filtered KNN uses sqlite-vec directly.
`vector_spaces` records the model id and dimension behind `N_vec`: a different embedder means the
old vectors are dropped and must be re-embedded — vectors of two models are never mixed.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import apsw
import numpy as np

from tideline.embed import normalise
from tideline.search._analyse import DEFAULT_ANALYSER, Analyser, analyse
from tideline.search._index_base import IndexBase, KeyLookup
from tideline.search._key_freqs import KeyCounter, counted, spaced
from tideline.search._knn import FileSearch, VectorOptions, exact_distances, selected_ids
from tideline.search._lexical import Counts, Freqs
from tideline.search._lexical_file import CATCH_UP, FILTERED, LexicalFile, lexical_folder
from tideline.search._query import ParsedQuery
from tideline.search._text import fold
from tideline.search._types import Hit
from tideline.store import Storage

log = logging.getLogger(__name__)

#: A row as apsw returns it (column types are the schema's, which the type checker cannot see).
Row = tuple[Any, ...]


class Readable(Protocol):
    """A connection `stored_vectors` can read from (apsw's, or `Database`)."""

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...


def _post_filter(where: str) -> str:
    """The owner's `rowid IN (…)` condition as a check on each FTS5 match, never a constraint
    handed to FTS5: given `rowid IN (subquery)`, SQLite's planner runs the full-text query once
    per listed rowid (`INDEX 0:=M…` in the plan), which took 0.1–12 s per search over 10k live
    narratives or a few weeks of 50k turns; checked after the match (a Bloom filter over the
    list) it takes a few ms. Unary `+` makes the term unusable as a constraint."""
    return f"+({where})"


#: Indexes from this many records drop a query's terms found in over half of them
#: (`_weightless`): in a handful of records "half" is one or two, and the term may be the match.
WEIGHTLESS_FROM = 200

#: Vector searches of an index answered by sqlite-vec's scan before this process loads its copy
#: of every vector (`TextIndex._copy_pays`): more than one CLI search makes.
SCANS_BEFORE_COPY = 8
#: `term_freqs` counts in the candidates' keys (`_key_freqs`) once the records holding the
#: query's words are this many times the candidates' tokens: FTS5's walk costs 0.2–0.4 µs a
#: holding record, analysing and counting a key 2–3 µs a token (measured at 200k turns / 20k
#: narratives, docs/benchmarks.md "A million turns").
KEYS_TF_FROM = 10
#: Terms whose record counts an index keeps (`_shares`); past it the memo starts again.
_KNOWN_TERMS = 20_000


def _blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (big-endian, 7 bits a byte, the ninth byte whole), as FTS5 writes them."""
    out: list[int] = []
    value, n = 0, 0
    for byte in blob:
        n += 1
        if n == 9:
            out.append((value << 8) | byte)
            value, n = 0, 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            out.append((value << 7) | byte)
            value, n = 0, 0
    return out


def _tf(api: Any, *args: Any) -> str:
    """FTS5 auxiliary function: the row's length in tokens, then each phrase of the query with
    its count in the row, separated by control characters (never in analysed text)."""
    parts = [str(api.column_size(0))]
    for i, tokens in enumerate(api.phrases):
        parts.append(f"{' '.join(tokens)}\x1e{len(api.phrase_column_offsets(i, 0))}")
    return "\x1f".join(parts)


_with_tf: weakref.WeakSet[Any] = weakref.WeakSet()


def _register_tf(db: Storage) -> None:
    """Register `tideline_tf` on this database's connection, once."""
    conn = getattr(db, "conn", None)
    if conn is not None and conn not in _with_tf:
        conn.register_fts5_function("tideline_tf", _tf)
        _with_tf.add(conn)


@dataclass(frozen=True)
class _Matrix:
    """The numpy copy of the vectors: rows sorted by record; `starts` marks each record's first
    row when some record has several parts (None: one row per record)."""

    version: tuple[int, int]
    ids: np.ndarray
    rows: np.ndarray
    starts: np.ndarray | None


class SqliteTextIndex(IndexBase):
    """`IndexBase` on SQLite: FTS5, trigram and sqlite-vec tables, and the files beside the
    database (see the module docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        self._writes = 0
        self._matrix: _Matrix | None = None
        self._scans = 0  # vector searches answered without the copy (`_copy_pays`)
        self._file: FileSearch | None = None
        self._vector_count: tuple[tuple[int, int], int] | None = None
        self._lexfile: LexicalFile | None = None
        self._keys: tuple[KeyLookup, Callable[[], Sequence[int]]] | None = None
        self._token_count = 0  # tokens in `N_fts`, as of `_count`'s version
        self._counter: tuple[Any, KeyCounter] | None = None  # FTS5's tokenizer, per connection
        super().__init__(db, name, analyser, keys)
        #: `N_terms` holds every record of `N_fts` (see the module docstring).
        self.terms = self._terms_complete()

    def _terms_complete(self) -> bool:
        """Whether `N_terms` holds every record: marked so, or `N_fts` is empty (then this
        index keeps it from its first record on and is marked)."""
        if self._key_counter() is None:
            return False
        if self.db.scalar("SELECT 1 FROM lexical_terms WHERE name = ?", (self.name,)):
            return True
        if self.db.scalar(f"SELECT 1 FROM {self.name}_fts_docsize LIMIT 1"):
            return False  # made before `N_terms`: counted by FTS5's walk until `reanalyse`
        with self.db.transaction():
            self.db.execute(f"DELETE FROM {self.name}_terms")
            self.db.execute("INSERT OR IGNORE INTO lexical_terms(name) VALUES (?)", (self.name,))
        return True

    def _key_counter(self) -> KeyCounter | None:
        """FTS5's tokenizer on this database's connection (None: no SQLite connection)."""
        conn = getattr(self.db, "conn", None)
        if conn is None:
            return None
        if self._counter is None or self._counter[0] is not conn:
            self._counter = (conn, KeyCounter(conn))
        return self._counter[1]

    def _write_terms(self, rows: Sequence[tuple[int, str]]) -> None:
        """Keep `N_terms` beside `N_fts` (inside the writer's transaction): the analysed texts
        cut by FTS5's own tokenizer."""
        counter = self._key_counter()
        if not self.terms or counter is None:
            return
        cut = [(i, counter.tokens(text)) for i, text in rows]
        self.db.executemany(
            f"INSERT OR REPLACE INTO {self.name}_terms(id, length, tokens) VALUES (?, ?, ?)",
            [(i, len(tokens), spaced(tokens)) for i, tokens in cut],
        )

    def _stored_marker(self, wanted: str) -> str:
        stored = self.db.scalar(
            "SELECT analyser FROM lexical_analysers WHERE name = ?", (self.name,)
        )
        if stored is not None:
            return str(stored)
        # Before the marker existed every index was `plain`; an empty one takes the wanted one.
        legacy = self.db.scalar(f"SELECT 1 FROM {self.name}_fts LIMIT 1")
        made = "plain" if legacy else wanted
        self.db.execute(
            "INSERT OR IGNORE INTO lexical_analysers(name, analyser) VALUES (?, ?)",
            (self.name, made),
        )
        return made

    def reanalyse(self, items: Iterable[tuple[int, str]]) -> int:
        """Rebuild `N_fts` from every (id, text) of the owner with the wanted analyser (one
        transaction; the trigram and vector tables are untouched). Returns the records done."""
        analyser = cast(Analyser, self.wanted.split(";")[0])
        rows = [(int(i), analyse(t, analyser)) for i, t in items]
        self._text_writes += 1
        with self.db.transaction():
            self.db.execute(f"DROP TABLE IF EXISTS {self.name}_fts")
            self.create_tables(self.db, self.name)
            self.db.executemany(f"INSERT INTO {self.name}_fts(rowid, text) VALUES (?, ?)", rows)
            self.db.execute(f"DELETE FROM {self.name}_terms")
            self.terms = self._key_counter() is not None
            self._write_terms(rows)
            if self.terms:
                self.db.execute(
                    "INSERT OR IGNORE INTO lexical_terms(name) VALUES (?)", (self.name,)
                )
            self.db.execute(
                "INSERT OR REPLACE INTO lexical_analysers(name, analyser) VALUES (?, ?)",
                (self.name, self.wanted),
            )
            self._note_texts(None)
        self.made, self.analyser = self.wanted, analyser
        log.info("index %s: %d texts re-analysed (%s)", self.name, len(rows), self.wanted)
        return len(rows)

    @staticmethod
    def create_tables(db: Storage, name: str) -> None:
        """Create the FTS tables (idempotent); safe inside a migration."""
        IndexBase._create_records(db)
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {name}_fts USING fts5(text, "
            "tokenize='unicode61 remove_diacritics 2', content='', contentless_delete=1)"
        )
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {name}_vocab USING fts5vocab({name}_fts, 'row')"
        )
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {name}_terms(id INTEGER PRIMARY KEY,"
            " length INTEGER NOT NULL, tokens TEXT NOT NULL)"
        )
        db.execute("CREATE TABLE IF NOT EXISTS lexical_terms(name TEXT PRIMARY KEY)")
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {name}_tri USING fts5(text, "
            "tokenize='trigram remove_diacritics 1', content='', contentless_delete=1)"
        )
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {name}_vecpart(record INTEGER NOT NULL, "
            "part INTEGER NOT NULL, embedding BLOB NOT NULL, PRIMARY KEY (record, part)) "
            "WITHOUT ROWID"
        )
        # the records whose texts changed, in commit order (NULL: all): see `_lexical_file`
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {name}_lexlog("
            "seq INTEGER PRIMARY KEY AUTOINCREMENT, record INTEGER)"
        )
        # the records whose vectors changed, in commit order (NULL: all): see `_knn`
        db.execute(
            f"CREATE TABLE IF NOT EXISTS {name}_veclog("
            "seq INTEGER PRIMARY KEY AUTOINCREMENT, record INTEGER)"
        )

    # -- vectors -------------------------------------------------------------------------------
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

    def _note_changes(self, ids: Sequence[int] | None) -> None:
        """Append to the change log (inside the writer's transaction); None: every record."""
        if self.db.dialect != "sqlite":
            return
        if self._file is not None:
            self._file.writes += 1
        if ids is None:
            self.db.execute(f"INSERT INTO {self.name}_veclog(record) VALUES (NULL)")
        else:
            self.db.executemany(
                f"INSERT INTO {self.name}_veclog(record) VALUES (?)", [(int(i),) for i in ids]
            )

    def _note_texts(self, ids: Sequence[int] | None) -> None:
        """Append to the text change log (inside the writer's transaction); None: all."""
        if self.db.dialect != "sqlite":
            return
        if ids is None:
            self.db.execute(f"INSERT INTO {self.name}_lexlog(record) VALUES (NULL)")
        else:
            self.db.executemany(
                f"INSERT INTO {self.name}_lexlog(record) VALUES (?)", [(int(i),) for i in ids]
            )

    def lexical_source(self, keys: KeyLookup, ids: Callable[[], Sequence[int]]) -> None:
        """The owner's lexical keys by id and its record ids: what the lexical file is made of
        (an index without them searches FTS5 only)."""
        self._keys = (keys, ids)

    def _lexical_file(self) -> LexicalFile | None:
        path = getattr(self.db, "path", None)
        if self._lexfile is None and self.db.dialect == "sqlite" and isinstance(path, Path):
            self._lexfile = LexicalFile(lexical_folder(path), self.name, path)
        return self._lexfile

    def _lex_position(self) -> int:
        return int(self.db.scalar(f"SELECT coalesce(max(seq), 0) FROM {self.name}_lexlog") or 0)

    def _analysed_keys(self, ids: Sequence[int]) -> dict[int, str]:
        """The analysed keys of those of `ids` that `N_fts` holds (the owner keeps some records
        out of the index: a superseded narrative stays readable by id)."""
        assert self._keys is not None
        held: set[int] = set()
        for start in range(0, len(ids), 500):
            part = [int(i) for i in ids[start : start + 500]]
            marks = ",".join("?" * len(part))
            held.update(
                int(r[0])
                for r in self.db.execute(
                    f"SELECT id FROM {self.name}_fts_docsize WHERE id IN ({marks})", part
                )
            )
        found = self._keys[0](sorted(held))
        return {int(i): analyse(t, self.analyser) for i, t in found.items() if int(i) in held}

    def build_lexical_file(self, guard: AbstractContextManager[object] | None = None) -> bool:
        """Build the lexical file from every record's key now; False when this index has no
        key source, is small, or another process is building it. Only the reads hold `guard`
        (the owner's lock on a shared connection), a few thousand keys at a time."""
        file = self._lexical_file()
        guard = guard or contextlib.nullcontext()
        with guard:
            if file is None or self._keys is None or self.stale:
                return False
            with self.db.reading():
                position = self._lex_position()
                ids = list(self._keys[1]())
        if not self.options.large(len(ids)):
            return False

        def items() -> Iterator[tuple[int, str]]:
            for start in range(0, len(ids), 5000):
                with guard:
                    keys = self._analysed_keys(ids[start : start + 5000])
                yield from keys.items()

        done = file.build(items(), self.made, position)
        if done:
            with guard, self.db.transaction():  # what the file includes is needed no more
                self.db.execute(f"DELETE FROM {self.name}_lexlog WHERE seq < ?", (position,))
                self.db.execute(
                    f"UPDATE {self.name}_lexlog SET record = NULL WHERE seq = ?", (position,)
                )
        return done

    def _large_lexical_file(self) -> LexicalFile | None:
        """The lexical file when this index has a key source and is large enough to search it."""
        if self.options.file_min is None or self._keys is None:
            return None
        file = self._lexical_file()
        return file if file is not None and self.options.large(self._records()) else None

    def lexical_file_due(self) -> bool:
        """A large index whose lexical file is missing, made otherwise or far behind."""
        file = self._large_lexical_file()
        if file is None:
            return False
        state = file.open(self.made)
        return state is None or self._lex_position() - state.position > CATCH_UP

    def _from_lexical_file(
        self, parsed: ParsedQuery, k: int, where: str | None, params: Sequence[object]
    ) -> list[Hit] | None:
        """BM25's top `k` from the lexical file, brought up to date first (within the filter's
        records, when there are at most `FILTERED`); None when it cannot answer (FTS5 does)."""
        file = self._large_lexical_file()
        state = file.open(self.made) if file is not None else None
        if file is None or state is None:
            return None
        if self._lex_position() != state.position:
            rows = self.db.execute(
                f"SELECT record FROM {self.name}_lexlog WHERE seq > ?", (state.position,)
            ).fetchall()
            if len(rows) > CATCH_UP or any(r[0] is None for r in rows):
                return None
            with self.db.reading():
                position = self._lex_position()
                changed = sorted({int(r[0]) for r in rows})
                keys = self._analysed_keys(changed)
            if not file.apply({i: keys.get(i) for i in changed}, position):
                return None
        allowed = None
        if where is not None:
            allowed = selected_ids(
                self.db,
                f"SELECT id AS i FROM {self.name}_fts_docsize WHERE {where} LIMIT ?",
                (*params, FILTERED + 1),
            )
            if len(allowed) > FILTERED:
                return None
        found = file.search(parsed, k, None if allowed is None else allowed.tolist())
        if found is None:
            return None
        return [
            Hit(i, lex_rank=n, lex_score=score, lex_source="bm25")
            for n, (i, score) in enumerate(found, 1)
        ]

    def configure(self, options: VectorOptions) -> None:
        """How this index finds vector candidates (the composition root passes the settings)."""
        super().configure(options)
        if self._file is not None:
            self._file.options = options

    def vector_file(self) -> FileSearch | None:
        """The vector file beside the database (SQLite on disk only; see `_knn`)."""
        path = getattr(self.db, "path", None)
        if self._file is None and self.db.dialect == "sqlite" and isinstance(path, Path):
            self._file = FileSearch(self, path, self.options)
        return self._file

    def _vectors_stored(self) -> int:
        """Records with a vector, counted again after a write."""
        version = (int(self.db.scalar("PRAGMA data_version")), self._writes)
        if self._vector_count is None or self._vector_count[0] != version:
            count = int(self.db.scalar(f"SELECT count(*) FROM {self.name}_vec_rowids") or 0)
            self._vector_count = (version, count)
        return self._vector_count[1]

    def large_vector_file(self) -> FileSearch | None:
        """The vector file when this index is large enough to search it."""
        if self.options.file_min is None or not self.has_vectors or self.db.dialect != "sqlite":
            return None
        if not self.options.large(self._vectors_stored()):
            return None
        return self.vector_file()

    def text_ids(self) -> set[int]:
        """Records that have their text in the index."""
        return {r[0] for r in self.db.execute(f"SELECT rowid FROM {self.name}_fts")}

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
        for start in range(0, len(ids), 500):
            part = [int(i) for i in ids[start : start + 500]]
            marks = ",".join("?" * len(part))
            for i, blob in self.db.execute(
                f"SELECT record, embedding FROM {self.name}_vecpart WHERE record IN ({marks})"
                " ORDER BY record, part",
                part,
            ):
                if i in out:
                    out[i].append(np.frombuffer(blob, dtype=np.float32))
        return {i: np.stack(v) for i, v in out.items()}

    # -- writes --------------------------------------------------------------------------------
    def upsert_many(
        self, items: Sequence[tuple[int, str]], keys: Mapping[int, str] | None = None
    ) -> None:
        """(Re)index texts; `keys` gives a record the lexical key BM25 sees instead of its text
        (the trigram table, keyword checks and vectors keep the text). Vectors are set
        separately: embedding is the slow part."""
        keys = keys or {}
        self._text_writes += 1
        with self.db.transaction():
            ids = [(int(i),) for i, _ in items]
            self.db.executemany(f"DELETE FROM {self.name}_fts WHERE rowid = ?", ids)
            self.db.executemany(f"DELETE FROM {self.name}_tri WHERE rowid = ?", ids)
            rows = [(int(i), analyse(keys.get(int(i), t), self.analyser)) for i, t in items]
            self.db.executemany(f"INSERT INTO {self.name}_fts(rowid, text) VALUES (?, ?)", rows)
            self._write_terms(rows)
            self.db.executemany(
                f"INSERT INTO {self.name}_tri(rowid, text) VALUES (?, ?)",
                [(int(i), fold(t)) for i, t in items],
            )
            self._note_texts([i for (i,) in ids])

    def delete(self, rowids: Iterable[int]) -> None:
        ids = [(int(i),) for i in rowids]
        self._writes += 1
        self._text_writes += 1
        with self.db.transaction():
            self.db.executemany(f"DELETE FROM {self.name}_fts WHERE rowid = ?", ids)
            self.db.executemany(f"DELETE FROM {self.name}_terms WHERE id = ?", ids)
            self.db.executemany(f"DELETE FROM {self.name}_tri WHERE rowid = ?", ids)
            self._note_texts([i for (i,) in ids])
            self.db.executemany(f"DELETE FROM {self.name}_vecpart WHERE record = ?", ids)
            if self.has_vectors:
                self.db.executemany(f"DELETE FROM {self.name}_vec WHERE rowid = ?", ids)
                self._note_changes([i for (i,) in ids])

    # -- reads ---------------------------------------------------------------------------------
    def _lexical(
        self,
        parsed: ParsedQuery,
        k: int,
        where: str | None,
        params: Sequence[object],
        trigram: Literal["top_up", "fallback"],
    ) -> list[Hit]:
        """BM25 over `unicode61` (from the lexical file when there is one), then substrings
        from the trigram table."""
        extra = f" AND {_post_filter(where)}" if where else ""
        hits: list[Hit] = []
        filed = self._from_lexical_file(parsed, k, where, params) if parsed.match else None
        if filed is not None:
            hits = filed
        elif parsed.match:
            rows: list[Row] = self.db.execute(
                f"SELECT rowid, bm25({self.name}_fts) FROM {self.name}_fts "
                f"WHERE {self.name}_fts MATCH ?{extra} ORDER BY 2 LIMIT ?",
                (parsed.match, *params, k),
            ).fetchall()
            hits = [
                Hit(r[0], lex_rank=n, lex_score=-r[1], lex_source="bm25")
                for n, r in enumerate(rows, 1)
            ]
        wanted = not hits if trigram == "fallback" else len(hits) < k
        if wanted and parsed.trigram:
            seen = {h.id for h in hits}
            rows = self.db.execute(
                f"SELECT rowid, bm25({self.name}_tri) FROM {self.name}_tri "
                f"WHERE {self.name}_tri MATCH ?{extra} ORDER BY 2 LIMIT ?",
                (parsed.trigram, *params, k),
            ).fetchall()
            for r in rows:
                if r[0] not in seen and len(hits) < k:
                    hits.append(
                        Hit(r[0], lex_rank=len(hits) + 1, lex_score=-r[1], lex_source="trigram")
                    )
        return hits

    def _many_records(self) -> bool:
        """Enough records for `_weightless` to be safe (`WEIGHTLESS_FROM`)."""
        return self._records() >= WEIGHTLESS_FROM

    def _shares(self, words: Sequence[str]) -> dict[str, float]:
        """The share of the records that hold each of these terms (from `N_vocab`), kept until
        the index changes: `N_vocab` counts a term's records by reading its whole posting list
        (p50 1.2 ms a query at 100k records, for the same frequent words again and again)."""
        total = self._records()
        if len(self._records_with) > _KNOWN_TERMS:  # before the known ones are set aside
            self._records_with.clear()
        todo = [w for w in dict.fromkeys(words) if w not in self._records_with]
        if todo:
            marks = ",".join("?" * len(todo))
            rows: list[Row] = self.db.execute(
                f"SELECT term, doc FROM {self.name}_vocab WHERE term IN ({marks})", todo
            ).fetchall()
            found = {str(r[0]): int(r[1]) for r in rows}
            self._records_with.update((w, found.get(w, 0)) for w in todo)
        return {w: self._records_with[w] / total for w in words} if total else {}

    def _records(self) -> int:
        """Records in `N_fts`, read again after a write (which also forgets the terms')."""
        version = (int(self.db.scalar("PRAGMA data_version")), self._text_writes)
        if self._count is None or self._count[0] != version:
            rows, tokens = self._averages()
            self._count = (version, rows)
            self._token_count = tokens
            self._records_with.clear()
        return self._count[1]

    def _averages(self) -> tuple[int, int]:
        """(records, tokens) of `N_fts` from FTS5's averages record (varints: the row count,
        then the tokens of each column), which FTS5 brings up to date at each commit:
        `count(*)` walks every row (85 ms of CPU at a million turns, paid by the first search
        after each write). Inside a write transaction the record lags its pending rows, so
        the records are counted there."""
        blob = self.db.scalar(f"SELECT block FROM {self.name}_fts_data WHERE id = 1")
        values = _varints(blob) if isinstance(blob, bytes) else []
        tokens = values[1] if len(values) > 1 else 0
        conn = getattr(self.db, "conn", None)
        if conn is not None and conn.txn_state() == apsw.SQLITE_TXN_WRITE:
            return int(self.db.scalar(f"SELECT count(*) FROM {self.name}_fts")), tokens
        return (values[0] if values else 0), tokens

    def term_counts(self, terms: Sequence[str]) -> Counts | None:
        """The records, their tokens and the records holding each word of `terms` (for BM25
        over several indexes, `_lexical`)."""
        words = list(dict.fromkeys(w for t in terms for w in t.split()))
        self._shares(words)
        return Counts(
            self._records(), self._tokens(), {w: self._records_with.get(w, 0) for w in words}
        )

    def _tokens(self) -> int:
        """Tokens in `N_fts` (`_averages`), as of `_records`' reading."""
        self._records()
        return self._token_count or 0

    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        """Each of these records' length in tokens and how often it holds each of the query's
        terms (a phrase's words space-separated), from FTS5 itself (the `tideline_tf`
        auxiliary function) on the query's own matches, checked against `ids` after the match
        (`_post_filter`)."""
        match = self._parsed(parsed)
        if match is None or not match.match or not ids:
            return {}
        found = self._freqs_from_terms(match, ids)
        if found is None:
            found = self._freqs_from_keys(match, ids)
        if found is not None:
            return found
        _register_tf(self.db)
        marks = ",".join(str(int(i)) for i in ids)
        rows: list[Row] = self.db.execute(
            f"SELECT rowid, tideline_tf({self.name}_fts) FROM {self.name}_fts "
            f"WHERE {self.name}_fts MATCH ? AND {_post_filter(f'rowid IN ({marks})')}",
            (match.match,),
        ).fetchall()
        out: dict[int, Freqs] = {}
        for rowid, packed in rows:
            length, *pairs = str(packed).split("\x1f")
            tf: dict[str, int] = {}
            for pair in pairs:
                phrase, _, n = pair.rpartition("\x1e")
                tf[phrase] = tf.get(phrase, 0) + int(n)
            out[int(rowid)] = (int(length), tf)
        return out

    def _freqs_from_terms(self, match: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        """`term_freqs` counted in the candidates' rows of `N_terms`, read by rowid: FTS5's own
        tokens, so FTS5's counts (`_key_freqs.counted`); None: FTS5 answers (an index made
        before `N_terms`, or a query the count cannot answer exactly, such as a prefix)."""
        counter = self._key_counter()
        phrases = counter.phrases(match) if self.terms and counter is not None else None
        if phrases is None:
            return None
        records: dict[int, tuple[int, str]] = {}
        for start in range(0, len(ids), 500):
            part = [int(i) for i in ids[start : start + 500]]
            marks = ",".join("?" * len(part))
            records.update(
                (int(r[0]), (int(r[1]), str(r[2])))
                for r in self.db.execute(
                    f"SELECT id, length, tokens FROM {self.name}_terms WHERE id IN ({marks})",
                    part,
                )
            )
        return counted(records, *phrases)

    def _freqs_from_keys(self, match: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        """`term_freqs` counted in the candidates' own keys (`_key_freqs`) when the records
        holding the query's words outnumber the candidates' tokens `KEYS_TF_FROM` times (FTS5's
        walk over their matches costs more then); None: FTS5 answers."""
        counter = self._key_counter()
        if self._keys is None or counter is None or not self._many_records():
            return None
        phrases = counter.phrases(match)
        if phrases is None:
            return None
        words = list(dict.fromkeys(w for p in phrases[0] for w in p))
        records = self._records()
        holding = sum(self._shares(words).values()) * records
        if holding <= KEYS_TF_FROM * len(ids) * self._tokens() / max(1, records):
            return None
        return counter.freqs(self._analysed_keys(ids), *phrases)

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

    def _stored_matches(self, parsed: ParsedQuery, ids: Sequence[int]) -> set[int]:
        """`keyword_matches` on the trigram table (which must scan every posting of every
        term)."""
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT rowid FROM {self.name}_tri WHERE {self.name}_tri MATCH ? AND rowid IN ({marks})",
            (parsed.trigram_all, *ids),
        )
        return {r[0] for r in rows}

    def containing(self, parsed: ParsedQuery) -> list[int]:
        """Every record whose text contains each typed term (3+ chars) verbatim, by id: an
        exact, unranked match, for acting on everything a query names (forgetting)."""
        if not parsed.trigram_all:
            return []
        rows = self.db.execute(
            f"SELECT rowid FROM {self.name}_tri WHERE {self.name}_tri MATCH ? ORDER BY rowid",
            (parsed.trigram_all,),
        )
        return [int(r[0]) for r in rows]

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
            wanted = [int(i) for i in ids]
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows += self.db.execute(f"{sql} WHERE rowid IN ({marks})", part).fetchall()
        rows.sort(key=lambda r: r[0])
        found = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        return found, matrix.reshape(len(rows), self.dim)

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

    # -- what an engine builds beside its tables (PostgreSQL: GIN and HNSW; `PgTextIndex`) -----
    def restore_indexes(self) -> None:
        """Build the engine's search indexes that are missing (`tideline doctor --repair`).
        SQLite's are tables (FTS5, vec0) and a vector file made again whenever it is missing,
        damaged or behind (`_vector_file`): nothing to build here."""

    def pause_ann(self) -> bool:
        """Drop the approximate-neighbour index the database keeps, ahead of loading many
        vectors (then `set_ann(True)` builds it once, not one insertion per vector); whether
        there was one. SQLite keeps none in the database (its vector file catches up on its own).
        """
        return False

    def set_ann(self, enabled: bool) -> None:
        """Build (or drop) the database's approximate-neighbour index: SQLite has none."""


#: The SQLite index by the name owners and tests have always used.
TextIndex = SqliteTextIndex
