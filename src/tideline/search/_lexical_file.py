"""The lexical file beside an SQLite database: a tantivy index of one large `TextIndex`'s terms,
for top-k BM25 whose cost does not grow with the matches of frequent words (issue 25).

FTS5 ranks every match of a query's words before it keeps the best `k` (~0.5 µs a match: a
frequent word at 1M records is hundreds of milliseconds). tantivy keeps per-block maxima of each
posting list and skips the blocks that cannot reach the current top k (block-max WAND), so a
query costs about the same whatever its words' frequencies.

It indexes the same tokens as `N_fts` (the analyser's terms, folded as `unicode61` folds them:
`_terms`), one document per record with its id, and answers the same OR of terms, phrases and
prefixes, minus the excluded ones. Scores are tantivy's BM25 (k1 1.2, b 0.75, as FTS5; the IDF
is Lucene's `ln(1 + (N − n + 0.5) / (n + 0.5))`, which FTS5 writes without the `1 +`; lengths are
stored to one byte): the order can differ from FTS5's in near ties, measured in
docs/benchmarks.md.

Kept in step like the vector file: every text write appends its records to `N_lexlog` (in the
writer's transaction); `<name>.state` says which log position the index includes (written after
tantivy's own atomic commit, so it may only lag). A search whose log has moved on applies the
changes first (it needs the owner's texts and tantivy's writer lock; a few thousand at most) or,
when it cannot, searches FTS5 as before: never a stale answer. A filtered search (a time
window) takes the filter's records from SQL and asks tantivy for the best of those only, when
there are at most `FILTERED` of them (more: FTS5, whose post-filter is then cheap in relation). The owner builds the file
(`LexicalFile.build`, from every record's lexical key) after a bulk load, from `tideline embed` or
the server's background thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tideline.search._query import ParsedQuery
from tideline.search._terms import fts_strings, tokens
from tideline.search._vector_file import build_lock, database_identity

log = logging.getLogger(__name__)

FORMAT = 1
#: Changed records a search applies itself before answering; more and it searches FTS5.
CATCH_UP = 5_000
#: A filter passing at most this many records is searched in the file (its ids as a term set).
FILTERED = 100_000
_HEAP = 64_000_000


def lexical_folder(database: Path) -> Path:
    return database.with_name(database.name + ".lexical")


@dataclass(frozen=True)
class LexState:
    """`<name>.state`: the generation folder, what made it, and the log position it includes."""

    folder: str
    made: str
    database: list[int]
    position: int
    format: int = FORMAT


def _schema() -> Any:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("id", stored=True, indexed=True, fast=True)
    sb.add_text_field("text", stored=False, tokenizer_name="whitespace")
    return sb.build()


def _document(record: int, text: str) -> Any:
    import tantivy

    return tantivy.Document(id=int(record), text=" ".join(tokens(text)))


class LexicalFile:
    """One index's tantivy file (see the module docstring)."""

    def __init__(self, root: Path, name: str, path: Path):
        self.root = root
        self.name = name
        self.path = path
        self._index: Any = None
        self._state: LexState | None = None
        self._schema: Any = None

    # -- state ---------------------------------------------------------------------------------
    def state(self) -> LexState | None:
        try:
            raw = json.loads((self.root / f"{self.name}.state").read_text("utf-8"))
            state = LexState(**raw)
        except (OSError, ValueError, TypeError):
            return None
        ok = (
            state.format == FORMAT
            and re.fullmatch(rf"{self.name}-[0-9a-f]+", state.folder) is not None
            and state.database == database_identity(self.path)
        )
        return state if ok else None

    def _write_state(self, state: LexState) -> None:
        tmp = self.root / f".{self.name}.state.tmp"
        tmp.write_text(json.dumps(state.__dict__), "utf-8")
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(self.root / f"{self.name}.state")

    def open(self, made: str) -> LexState | None:
        """The state when the file is there, whole and made as `made` (the index's analyser
        marker); the tantivy index is opened (or reloaded) to its latest commit."""
        import tantivy

        try:
            state = self.state()
        except OSError:
            return None
        if state is None or state.made != made:
            return None
        try:
            if self._state is None or self._state.folder != state.folder or self._index is None:
                self._index = tantivy.Index.open(str(self.root / state.folder))
                self._index.register_tokenizer("whitespace", _analyzer())
                self._schema = self._index.schema
            else:
                self._index.reload()
        except (OSError, ValueError, RuntimeError):
            self._index = None
            return None
        self._state = state
        return state

    # -- writing -------------------------------------------------------------------------------
    def build(self, items: Iterable[tuple[int, str]], made: str, position: int) -> bool:
        """A new generation of every (record, lexical key); False when another process builds."""
        import tantivy

        with build_lock(self.root, f"{self.name}.lexical") as mine:
            if not mine:
                return False
            folder = f"{self.name}-{secrets.token_hex(4)}"
            tmp = self.root / f".{folder}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            index = tantivy.Index(_schema(), path=str(tmp))
            index.register_tokenizer("whitespace", _analyzer())
            writer = index.writer(heap_size=_HEAP, num_threads=1)
            for record, text in items:
                writer.add_document(_document(record, text))
            writer.commit()
            writer.wait_merging_threads()
            tmp.rename(self.root / folder)
            self._write_state(LexState(folder, made, database_identity(self.path), position))
            for old in self.root.iterdir():
                stale = old.name.startswith((f"{self.name}-", f".{self.name}-"))
                if stale and old.name != folder and old.is_dir() and not old.is_symlink():
                    shutil.rmtree(old, ignore_errors=True)
        return True

    def apply(self, changed: Mapping[int, str | None], position: int) -> bool:
        """Bring the open generation to `position`: each changed record's new key (None: gone).
        False when another process holds tantivy's writer (the caller searches FTS5)."""
        if self._index is None or self._state is None:
            return False
        try:
            writer = self._index.writer(heap_size=_HEAP, num_threads=1)
        except ValueError:  # tantivy: the writer's lock file is held by another process
            return False
        try:
            for record, text in changed.items():
                writer.delete_documents_by_term("id", int(record))
                if text is not None:
                    writer.add_document(_document(record, text))
            writer.commit()
            writer.wait_merging_threads()
        except BaseException:
            with contextlib.suppress(Exception):
                writer.rollback()
            raise
        state = LexState(self._state.folder, self._state.made, self._state.database, position)
        self._write_state(state)
        self._state = state
        self._index.reload()
        return True

    # -- reading -------------------------------------------------------------------------------
    def search(
        self, parsed: ParsedQuery, k: int, allowed: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The top `k` (record, BM25) of the query's OR, its exclusions left out; only the
        `allowed` records when given (a filter's, from SQL)."""
        import tantivy

        query = _query(self._schema, parsed)
        if query is None or self._index is None:
            return []
        if allowed is not None:
            inside = tantivy.Query.const_score_query(
                tantivy.Query.term_set_query(self._schema, "id", [int(i) for i in allowed]), 0.0
            )
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, query), (tantivy.Occur.Must, inside)]
            )
        searcher = self._index.searcher()
        found = searcher.search(query, k, count=False)
        return [(int(searcher.doc(a)["id"][0]), float(score)) for score, a in found.hits]


def _analyzer() -> Any:
    import tantivy

    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _part(schema: Any, words: list[str], prefix: bool) -> Any:
    import tantivy

    Q = tantivy.Query
    if len(words) == 1:
        if prefix:
            return Q.regex_query(schema, "text", re.escape(words[0]) + ".*")
        return Q.term_query(schema, "text", words[0])
    phrase: list[str | tuple[int, str]] = list(words)
    if prefix:
        return Q.phrase_prefix_query(schema, "text", phrase)
    return Q.phrase_query(schema, "text", phrase)


def _query(schema: Any, parsed: ParsedQuery) -> Any:
    """The tantivy query for `parsed`: its terms OR-ed, minus the excluded."""
    import tantivy

    clauses = [
        (tantivy.Occur.Should, _part(schema, words, prefix))
        for term in parsed.terms
        for words, prefix in fts_strings(term)
    ]
    if not clauses:
        return None
    clauses += [
        (tantivy.Occur.MustNot, _part(schema, words, prefix))
        for words, prefix in fts_strings(parsed.exclude or "")
    ]
    return tantivy.Query.boolean_query(clauses)
