"""`SqliteFiles`: the files beside an SQLite database that make a large index fast — a layer of
`SqliteTextIndex` (`_index`), above its term statistics (`_sqlite_terms`).

Two disposable files per index, each a cache of the database that can always be made again:
the vector file (`_knn`, `_vector_file`: HNSW over every vector, memory-mapped) and the lexical
file (`_lexical_file`: a tantivy index of the records' lexical keys). Each is searched only once
the index is large (`VectorOptions.large`); below that the tables answer exactly. Every write
appends the records it touched to a change log in its own transaction — `N_veclog` for vectors
(`_note_changes`), `N_lexlog` for texts (`_note_texts`), a NULL record meaning "every record" —
and a file records the log position it includes: a search reads the log past it and treats those
records exactly, so it is right whatever happened since the build, only slower; a file too far
behind (`CATCH_UP`) is not used, and is `due` for a build (the server builds in the background,
`tideline embed` and the benchmarks explicitly).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from tideline.search._analyse import DEFAULT_ANALYSER, Analyser
from tideline.search._hits import Hit
from tideline.search._knn import FileSearch, VectorOptions, selected_ids
from tideline.search._lexical_file import CATCH_UP, FILTERED, LexicalFile, lexical_folder
from tideline.search._query import ParsedQuery
from tideline.search._sqlite_terms import SqliteTerms
from tideline.store import Storage


class SqliteFiles(SqliteTerms):
    """The vector and lexical files of an SQLite index (see the module docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        self._writes = 0  # vector writes through this object (the copies reload after one)
        self._file: FileSearch | None = None
        self._vector_count: tuple[tuple[int, int], int] | None = None
        self._lexfile: LexicalFile | None = None
        super().__init__(db, name, analyser, keys)

    def _note_changes(self, ids: Sequence[int] | None) -> None:
        """Append to the change log (inside the writer's transaction); None: every record."""
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
        if ids is None:
            self.db.execute(f"INSERT INTO {self.name}_lexlog(record) VALUES (NULL)")
        else:
            self.db.executemany(
                f"INSERT INTO {self.name}_lexlog(record) VALUES (?)", [(int(i),) for i in ids]
            )

    def _lexical_file(self) -> LexicalFile | None:
        path = getattr(self.db, "path", None)
        if self._lexfile is None and isinstance(path, Path):
            self._lexfile = LexicalFile(lexical_folder(path), self.name, path)
        return self._lexfile

    def _lex_position(self) -> int:
        return int(self.db.scalar(f"SELECT coalesce(max(seq), 0) FROM {self.name}_lexlog") or 0)

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
        """The vector file beside the database (a database on disk only; see `_knn`)."""
        path = getattr(self.db, "path", None)
        if self._file is None and isinstance(path, Path):
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
        if self.options.file_min is None or not self.has_vectors:
            return None
        if not self.options.large(self._vectors_stored()):
            return None
        return self.vector_file()
