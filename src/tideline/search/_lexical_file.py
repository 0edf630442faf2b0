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

The state also holds each tantivy file's seal (`_seal`) and a digest of its own text, written in
the step that writes the files (a build, an `apply`); a search checks them (one `stat` a file)
before tantivy opens or reloads anything, and any failure of tantivy's while searching (a panic,
a `ValueError`) counts as damage too: the generation is reported once and deleted, FTS5 answers,
and the next build makes it again. `<name>.writing` (`flock`) keeps a check from seeing an
`apply` or a build half way: they hold it exclusively, a check holds it shared.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tideline.search._query import ParsedQuery
from tideline.search._seal import (
    Seal,
    check_files,
    moved,
    seal_files,
    sealed_text,
    unsealed,
    write_atomically,
)
from tideline.search._terms import fts_strings, tokens
from tideline.search._vector_file import build_lock, database_identity

log = logging.getLogger(__name__)

FORMAT = 2
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
    files: dict[str, Seal]
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
        """The state when it is whole and of this database; None otherwise."""
        return self._read_state()[0]

    def _read_state(self) -> tuple[LexState | None, str | None]:
        """(the state, what is wrong with it): (None, None) when there is none, or it is of
        another format or database (made again without a word)."""
        try:
            text = (self.root / f"{self.name}.state").read_text("utf-8")
        except FileNotFoundError:
            return None, None
        except (OSError, UnicodeDecodeError):
            return None, f"{self.name}.state cannot be read"
        raw = unsealed(text)
        if raw is None:
            with contextlib.suppress(ValueError, AttributeError):
                if json.loads(text).get("format") != FORMAT:
                    return None, None
            return None, f"{self.name}.state does not match its own checksum"
        try:
            state = LexState(**raw)
            whole = re.fullmatch(rf"{self.name}-[0-9a-f]+", state.folder) is not None
            ours = state.format == FORMAT and state.database == database_identity(self.path)
        except (TypeError, OSError):
            return None, f"{self.name}.state does not describe a lexical file"
        if not whole:
            return None, f"{self.name}.state does not describe a lexical file"
        return (state, None) if ours else (None, None)

    def _write_state(self, state: LexState) -> None:
        write_atomically(self.root / f"{self.name}.state", sealed_text(state.__dict__))

    @contextlib.contextmanager
    def _writing(self, *, shared: bool, wait: bool = True) -> Iterator[bool]:
        """`<name>.writing` held shared (a check) or exclusively (a write of files and state);
        yields False when `wait` is off and another process holds it the other way."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / f"{self.name}.writing", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
                fcntl.flock(fd, mode | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            yield True
        finally:
            os.close(fd)  # closing lets go of the lock

    def open(self, made: str, *, full: bool = False) -> LexState | None:
        """The state when the file is there, whole and made as `made` (the index's analyser
        marker); the tantivy index is opened (or reloaded) to its latest commit once its files
        are found as sealed. A damaged file is reported once and deleted (`discard`); `full`
        hashes every file (doctor), not only those whose stat moved."""
        with self._writing(shared=True):
            state, problem = self._read_state()
            damaged = None
            if state is not None and state.made == made:
                damaged = state.folder
                state, problem = self._checked(state, full)
        if problem is not None:
            self.discard(problem, damaged)
        return state if state is not None and state.made == made else None

    def check(self, *, discard: bool = False) -> tuple[Path, str] | None:
        """(the damaged file's folder, what is wrong), every byte read (doctor); None when the
        file is whole or absent. `discard` deletes a damaged one (`doctor --repair`)."""
        if not self.root.is_dir():
            return None
        with self._writing(shared=True):
            state, problem = self._read_state()
            folder = state.folder if state is not None else None
            if state is not None:
                problem = check_files(self.root / state.folder, state.files, full=True)[0]
        if problem is None:
            return None
        if discard:
            self.discard(problem, folder)
        return self.root / (folder or f"{self.name}.state"), problem

    def _checked(self, state: LexState, full: bool) -> tuple[LexState | None, str | None]:
        import tantivy

        folder = self.root / state.folder
        if full or self._state != state or moved(folder, state.files):
            problem, seals = check_files(folder, state.files, full=full)
            if problem is not None:
                self._index = None
                return None, problem
            if seals != state.files:  # whole, but its stat moved: the next check is a stat again
                state = LexState(state.folder, state.made, state.database, state.position, seals)
                with contextlib.suppress(OSError):
                    self._write_state(state)
        try:
            if self._state is None or self._state.folder != state.folder or self._index is None:
                self._index = tantivy.Index.open(str(folder))
                self._index.register_tokenizer("whitespace", _analyzer())
                self._schema = self._index.schema
            else:
                self._index.reload()
        except Exception as exc:  # sealed, yet tantivy refuses it
            self._index = None
            return None, f"tantivy cannot open it ({exc})"
        self._state = state
        return state, None

    def discard(self, problem: str, folder: str | None) -> None:
        """Report a damaged generation (`folder`; None: the state itself) once and delete it
        with its state: FTS5 answers until the next build makes it again."""
        log.warning(
            "the search file %s is damaged (%s); searching the database until it is rebuilt",
            self.root / (folder or f"{self.name}.state"),
            problem,
        )
        self._index, self._state = None, None
        with self._writing(shared=False):
            state, _ = self._read_state()
            if state is None or state.folder == folder:  # not a generation built since
                (self.root / f"{self.name}.state").unlink(missing_ok=True)
            if folder is not None:
                shutil.rmtree(self.root / folder, ignore_errors=True)

    def _seal(self, folder: Path, known: Mapping[str, Seal] | None = None) -> dict[str, Seal]:
        names = [p.name for p in folder.iterdir() if p.is_file() and not p.name.endswith(".lock")]
        return seal_files(folder, sorted(names), known)

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
            seals = self._seal(tmp)
            tmp.rename(self.root / folder)
            with self._writing(shared=False):
                state = LexState(folder, made, database_identity(self.path), position, seals)
                self._write_state(state)
                for old in self.root.iterdir():
                    stale = old.name.startswith((f"{self.name}-", f".{self.name}-"))
                    if stale and old.name != folder and old.is_dir() and not old.is_symlink():
                        shutil.rmtree(old, ignore_errors=True)
        return True

    def apply(self, changed: Mapping[int, str | None], position: int) -> bool:
        """Bring the open generation to `position`: each changed record's new key (None: gone).
        False when another process holds tantivy's writer or is checking the files (the caller
        searches FTS5), or when tantivy fails on the file (it is damaged: `discard`)."""
        if self._index is None or self._state is None:
            return False
        with self._writing(shared=False, wait=False) as mine:
            if not mine:
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
            except (KeyboardInterrupt, SystemExit):
                with contextlib.suppress(Exception):
                    writer.rollback()
                raise
            except BaseException as exc:  # a panic (`BaseException`) or a `ValueError`
                with contextlib.suppress(BaseException):
                    writer.rollback()
                problem: str | None = f"updating it failed: {exc}"
            else:
                problem = None
                old = self._state
                folder = self.root / old.folder
                seals = self._seal(folder, old.files)
                state = LexState(old.folder, old.made, old.database, position, seals)
                self._write_state(state)
                self._state = state
        if problem is not None:
            self.discard(problem, self._state.folder if self._state else None)
            return False
        self._index.reload()
        return True

    # -- reading -------------------------------------------------------------------------------
    def search(
        self, parsed: ParsedQuery, k: int, allowed: Sequence[int] | None = None
    ) -> list[tuple[int, float]] | None:
        """The top `k` (record, BM25) of the query's OR, its exclusions left out; only the
        `allowed` records when given (a filter's, from SQL). None when tantivy fails on the
        file (it is reported and deleted: FTS5 answers)."""
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
        try:
            searcher = self._index.searcher()
            found = searcher.search(query, k, count=False)
            return [(int(searcher.doc(a)["id"][0]), float(score)) for score, a in found.hits]
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # tantivy's panic is a `BaseException`: damage, not a bug
            self.discard(f"searching it failed: {exc}", self._state.folder if self._state else None)
            return None


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
