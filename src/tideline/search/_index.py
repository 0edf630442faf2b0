"""`SqliteTextIndex` (`TextIndex`): the index (`IndexBase`) of one kind of record in one SQLite
database; `PgTextIndex` is its sibling on PostgreSQL.

For an index named `N` over records with integer ids:
- `N_fts`  FTS5, `unicode61` with diacritics removed, over the text as the lexical analyser
  (`_analyse`) cuts it: Snowball stems, jieba words (or, `plain`, CJK characters spaced): BM25;
  `lexical_analysers` records which analyser made it (and the owner's `keys` label when the
  owner indexes a lexical key other than the text: raw turns add their neighbours and date), so
  queries are cut the same way; an index made otherwise than the owner wants is `stale` until
  the owner calls `reanalyse` (meanwhile queries keep using the old analyser: results stay right);
- `N_tri`  FTS5 `trigram`: substrings, partial words, verbatim keyword checks;
- `N_terms`, `N_vocab`: the term statistics (`_sqlite_terms`);
- `N_vec`, `N_vecpart`: the vectors (`_sqlite_vectors`);
- `N_veclog`, `N_lexlog`: the change logs of the files beside the database (`_sqlite_files`).
The FTS tables are contentless (the owner table keeps the text), so the index costs little space.

The class is built in layers, one concept a module, each above the last: `IndexBase` (what both
engines share), `SqliteTerms` (term statistics), `SqliteFiles` (the vector and lexical files),
`SqliteVectors` (vectors and KNN), and here the tables' creation, the writes and the lexical list.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from tideline.search._analyse import Analyser, analyse
from tideline.search._hits import Hit
from tideline.search._index_base import IndexBase
from tideline.search._query import ParsedQuery
from tideline.search._sqlite_terms import Row, post_filter
from tideline.search._sqlite_vectors import SqliteVectors
from tideline.search._text import fold
from tideline.store import Storage

log = logging.getLogger(__name__)


class SqliteTextIndex(SqliteVectors):
    """`IndexBase` on SQLite: FTS5, trigram and sqlite-vec tables, and the files beside the
    database (see the module docstring)."""

    # -- tables and what made them -------------------------------------------------------------
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

    # -- writes --------------------------------------------------------------------------------
    def text_ids(self) -> set[int]:
        """Records that have their text in the index."""
        return {r[0] for r in self.db.execute(f"SELECT rowid FROM {self.name}_fts")}

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
    def _matches(
        self, parsed: ParsedQuery, k: int, where: str | None, params: Sequence[object]
    ) -> list[Hit]:
        """BM25 over `unicode61`, from the lexical file when there is one."""
        if not parsed.match:
            return []
        filed = self._from_lexical_file(parsed, k, where, params)
        if filed is not None:
            return filed
        rows = self._bm25(f"{self.name}_fts", parsed.match, k, where, params)
        return [
            Hit(r[0], lex_rank=n, lex_score=-r[1], lex_source="bm25") for n, r in enumerate(rows, 1)
        ]

    def _substrings(
        self, parsed: ParsedQuery, k: int, where: str | None, params: Sequence[object]
    ) -> list[tuple[int, float]]:
        """From the trigram table, by its BM25."""
        if not parsed.trigram:
            return []
        rows = self._bm25(f"{self.name}_tri", parsed.trigram, k, where, params)
        return [(r[0], -r[1]) for r in rows]

    def _bm25(
        self, table: str, match: str, k: int, where: str | None, params: Sequence[object]
    ) -> list[Row]:
        """The `k` best rows of an FTS5 table that match, by BM25 (lower is better)."""
        extra = f" AND {post_filter(where)}" if where else ""
        rows: list[Row] = self.db.execute(
            f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ?{extra} ORDER BY 2 LIMIT ?",
            (match, *params, k),
        ).fetchall()
        return rows

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
