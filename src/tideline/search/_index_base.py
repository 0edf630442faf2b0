"""`IndexBase`: the index surface every engine offers, and what is the same on each.

An index named `N` holds the lexical terms and the vectors of one kind of record, keyed by the
owner's integer ids. Two engines implement it as siblings, neither inheriting the other's quirks
(basic-memory's `SearchRepositoryBase`): `SqliteTextIndex` (`_index`: FTS5, trigram, sqlite-vec,
and the vector and lexical files beside the database) and `PgTextIndex` (`_pg_index`: tsvector +
GIN, `strpos` substrings, pgvector HNSW). `search.open_index` picks one by the database's
engine; owners hold an `IndexBase` and never ask which.

Here, the same on both engines:
- what made each index (`vector_spaces`: the model id and dimension behind `N_vec`, so vectors
  of two models are never mixed; `lexical_analysers`: the analyser, and the owner's keys label,
  that cut `N`'s terms, so queries are cut the same way; `stale` until the owner `reanalyse`s);
- `fill_vectors`, the one place where text becomes vectors (memory, the library and its router
  all fill through it), on the engine's own `set_vectors` / `vectors_of`;
- a query cut by the index's analyser, its weightless terms left out (`_parsed`: each engine
  says how many records hold a term, `_shares`), the keyword check on the owner's texts
  (`keyword_matches`), and `search`, which is `retrieve` over this index alone.
Everything else is abstract: each engine states its own answer, even where it is "nothing"
(PostgreSQL keeps no files beside the database; SQLite keeps no ANN index inside it).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, cast

import numpy as np

from tideline.embed import Embedder, embed_parts
from tideline.errors import EmbedderError
from tideline.search._analyse import DEFAULT_ANALYSER, Analyser
from tideline.search._fallback import QueryVector
from tideline.search._fusion import RRF_K
from tideline.search._hits import Hit, Mode, Policy
from tideline.search._knn import FileSearch, VectorOptions
from tideline.search._lexical import SCRIPT_SPANS, Counts, Freqs, script
from tideline.search._query import ParsedQuery, parse_query
from tideline.search._retrieve import Scope, TextLookup, retrieve
from tideline.search._text import fold
from tideline.store import Storage

#: The owner's lexical keys of records by id (what `N`'s terms were made of; absent: no record).
KeyLookup = Callable[[Sequence[int]], Mapping[int, str]]

#: Called after each batch of `IndexBase.fill_vectors` with (records done, records asked for).
FillProgress = Callable[[int, int], None]

FILL_BATCH = 64

#: What to do about texts an embedder outage left without a vector (the owner may say better).
FILL_HINT = "run `tideline embed` (memory) or `memo reindex` (library)"


def text_key(text: str) -> str:
    """A short digest of an embedding text: records with equal keys share one vector."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass
class FillReport:
    """What `fill_vectors` did. embedded: distinct texts sent to the embedder; reused: records
    that got a copy (of a donor, or of a record with the same text); pending: records left
    without a vector; seconds: time spent embedding; warning: one line for the user when an
    outage stopped the fill, error: the embedder's own message."""

    embedded: int = 0
    reused: int = 0
    pending: int = 0
    seconds: float = 0.0
    warning: str | None = None
    error: str | None = None


#: `scripts_written` asks again whether the index writes in a script it did not once the
#: records moved by this share (a script is seldom added: PostgreSQL reads a sample for it).
_CENSUS_DRIFT = 0.01


class IndexBase(ABC):
    """Lexical + vector index keyed by the owner's integer ids, on one engine (see the module
    docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        if not name.isidentifier():
            raise ValueError(f"index name must be an identifier, got {name!r}")
        self.db = db
        self.name = name
        self.create_tables(db, name)
        row = db.one("SELECT model_id, dim FROM vector_spaces WHERE name = ?", (name,))
        self.model_id: str | None = row["model_id"] if row else None
        self.dim: int = row["dim"] if row else 0
        self.options = VectorOptions()
        #: (version the engine reads the record count at, records): `_records` / `_check_stats`
        self._count: tuple[tuple[int, int], int] | None = None
        self._records_with: dict[str, int] = {}  # term → its records, as of `_count`'s version
        #: `scripts_written`: the scripts found written in (an index seldom loses a script),
        #: and those found not, with the records there were then
        self._written: set[str] = set()
        self._unwritten: tuple[int, set[str]] = (-1, set())
        self._text_writes = 0
        #: How the owner wants `N`'s terms made ("analyser" or "analyser;keys") and how they were.
        self.wanted = f"{analyser};{keys}" if keys else analyser
        self.made = self._stored_marker(self.wanted)
        #: The analyser that made `N`'s terms: queries are cut by it (see `stale`).
        self.analyser: Analyser = cast(Analyser, self.made.split(";")[0])

    # -- what made the index -------------------------------------------------------------------
    @staticmethod
    def _create_records(db: Storage) -> None:
        """What made each index, on both engines: its vector space and its lexical analyser."""
        db.execute(
            "CREATE TABLE IF NOT EXISTS vector_spaces("
            "name TEXT PRIMARY KEY, model_id TEXT NOT NULL, dim INTEGER NOT NULL)"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS lexical_analysers("
            "name TEXT PRIMARY KEY, analyser TEXT NOT NULL)"
        )

    @staticmethod
    @abstractmethod
    def create_tables(db: Storage, name: str) -> None:
        """Create the index's tables (idempotent); safe inside a migration."""

    @abstractmethod
    def _stored_marker(self, wanted: str) -> str:
        """How `N`'s terms were made (`lexical_analysers`), recorded as `wanted` when new."""

    @property
    def stale(self) -> bool:
        """`N`'s terms were made otherwise than the owner wants: call `reanalyse`."""
        return self.made != self.wanted

    @abstractmethod
    def reanalyse(self, items: Iterable[tuple[int, str]]) -> int:
        """Make every record's terms again from (id, lexical key) with the wanted analyser (one
        transaction; substrings and vectors untouched). Returns the records done."""

    @staticmethod
    def forget_spaces(db: Storage) -> None:
        """For a database rebuilt from copied rows: its `vector_spaces` rows name vector tables
        that were not copied; without them each index binds (creates) its tables anew when
        vectors arrive."""
        db.execute("DELETE FROM vector_spaces")

    @property
    def space(self) -> tuple[str, int] | None:
        """(model id, dimension) of the vectors behind `N_vec`, or None before any are bound."""
        if not self.has_vectors or self.model_id is None:
            return None
        return self.model_id, self.dim

    # -- vectors -------------------------------------------------------------------------------
    @property
    def has_vectors(self) -> bool:
        return self.dim > 0 and self.db.vec_enabled

    @abstractmethod
    def bind_vectors(self, model_id: str, dim: int) -> bool:
        """Make `N_vec` hold vectors of this model. Returns True when old vectors were dropped."""

    @abstractmethod
    def set_vectors(self, items: Iterable[tuple[int, np.ndarray]]) -> None:
        """Store each record's vector: shape (dim,), or (parts, dim) for a text cut in parts."""

    @abstractmethod
    def vectors(self, ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 matrix) of the stored vectors (each record's first part), sorted by
        id; only `ids` when given. Empty (0 rows) when the index has no vectors."""

    @abstractmethod
    def vectors_of(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Each record's vectors, shape (parts, dim), for copying to a record with the same
        text."""

    def vector_ids(self) -> set[int]:
        if not self.has_vectors:
            return set()
        return {r[0] for r in self.db.execute(f"SELECT rowid FROM {self.name}_vec")}

    def configure(self, options: VectorOptions) -> None:
        """How this index finds vector candidates (the composition root passes the settings)."""
        self.options = options

    # -- what an engine keeps beside its tables ------------------------------------------------
    @abstractmethod
    def restore_indexes(self) -> None:
        """Build the engine's search indexes that are missing (`tideline doctor --repair`)."""

    @abstractmethod
    def pause_ann(self) -> bool:
        """Drop the approximate-neighbour index the database keeps, ahead of loading many
        vectors (then `set_ann(True)` builds it once, not one insertion per vector); whether
        there was one."""

    @abstractmethod
    def set_ann(self, enabled: bool) -> None:
        """Build (or drop) the database's approximate-neighbour index."""

    @abstractmethod
    def lexical_source(self, keys: KeyLookup, ids: Callable[[], Sequence[int]]) -> None:
        """The owner's lexical keys by id and its record ids: what a lexical file beside the
        database is made of."""

    @abstractmethod
    def build_lexical_file(self, guard: AbstractContextManager[object] | None = None) -> bool:
        """Build the lexical file beside the database now; False when there is none to build."""

    @abstractmethod
    def lexical_file_due(self) -> bool:
        """A large index whose lexical file is missing, made otherwise or far behind."""

    @abstractmethod
    def large_vector_file(self) -> FileSearch | None:
        """The vector file beside the database when this index is large enough to search it."""

    # -- writes --------------------------------------------------------------------------------
    @abstractmethod
    def text_ids(self) -> set[int]:
        """Records that have their text in the index."""

    @abstractmethod
    def upsert_many(
        self, items: Sequence[tuple[int, str]], keys: Mapping[int, str] | None = None
    ) -> None:
        """(Re)index texts; `keys` gives a record the lexical key BM25 sees instead of its text
        (substrings, keyword checks and vectors keep the text). Vectors are set separately:
        embedding is the slow part."""

    @abstractmethod
    def delete(self, rowids: Iterable[int]) -> None:
        """Remove these records' terms, substrings and vectors."""

    # -- reads ---------------------------------------------------------------------------------
    def _parsed(self, query: str | ParsedQuery) -> ParsedQuery | None:
        """The query cut by this index's analyser, its weightless terms left out (in over half
        of the records: ~0 weight, yet scoring their postings is the costly part); None when
        nothing is left to match."""
        parsed = (
            parse_query(query, self.analyser)
            if isinstance(query, str)
            else query.for_analyser(self.analyser)
        )
        if parsed.empty:
            return None
        if len(parsed.terms) > 1 and self._many_records():
            parsed = parsed.without(self._weightless(parsed.terms))
        return parsed

    @abstractmethod
    def _many_records(self) -> bool:
        """Enough records for `_weightless` to be safe."""

    def _weightless(self, terms: Sequence[str]) -> set[str]:
        """The single-word terms in more than half of the records: BM25 gives them an IDF of ~0
        (they cannot change the order) while they cost the most to score — at 100k records a
        query of frequent words spent most of its time on them."""
        words = {t: t[1:-1] for t in terms if t.startswith('"') and t.endswith('"')}
        words = {t: w for t, w in words.items() if w and " " not in w and '""' not in w}
        if not words:
            return set()
        share = self._shares(list(words.values()))
        return {t for t, w in words.items() if share.get(w, 0.0) > 0.5}

    @abstractmethod
    def _shares(self, words: Sequence[str]) -> dict[str, float]:
        """The share of the records that hold each of these terms (absent: not known)."""

    def lexical(
        self,
        query: str | ParsedQuery,
        k: int,
        where: str | None = None,
        params: Sequence[object] = (),
        *,
        trigram: Literal["top_up", "fallback"] = "top_up",
    ) -> list[Hit]:
        """The engine's ranked lexical list (BM25 on SQLite, `ts_rank` on PostgreSQL), then
        substring matches: "top_up" when it found fewer than `k`, "fallback" only when it
        found none (a substring OR-query over a large collection costs more than the rest of
        the search)."""
        parsed = self._parsed(query)
        if parsed is None:
            return []
        hits = self._matches(parsed, k, where, params)
        if not hits if trigram == "fallback" else len(hits) < k:
            seen = {h.id for h in hits}
            for rowid, score in self._substrings(parsed, k, where, params):
                if rowid not in seen and len(hits) < k:
                    hits.append(
                        Hit(rowid, lex_rank=len(hits) + 1, lex_score=score, lex_source="trigram")
                    )
        return hits

    @abstractmethod
    def _matches(
        self, parsed: ParsedQuery, k: int, where: str | None, params: Sequence[object]
    ) -> list[Hit]:
        """The engine's `k` best term matches of a query cut by this index's analyser
        (`_parsed`), ranked."""

    @abstractmethod
    def _substrings(
        self, parsed: ParsedQuery, k: int, where: str | None, params: Sequence[object]
    ) -> list[tuple[int, float]]:
        """Up to `k` records that hold the query's typed terms verbatim, best first, each with
        its score (what `lexical` tops its list up with)."""

    @abstractmethod
    def vector(
        self, qvec: np.ndarray, k: int, where: str | None = None, params: Sequence[object] = ()
    ) -> list[Hit]:
        """Nearest records by cosine distance (of their nearest part); each record once."""

    @abstractmethod
    def distances(self, qvec: np.ndarray, ids: Iterable[int]) -> dict[int, float]:
        """Cosine distance of each record (its nearest part) to `qvec`."""

    def keyword_matches(
        self, parsed: ParsedQuery, ids: Iterable[int], texts: TextLookup | None = None
    ) -> set[int]:
        """Ids whose text contains every typed term (3+ chars) verbatim, case-insensitively.

        With `texts` (the owner's id → text lookup) the check runs in Python on the candidates
        only; without it, on the engine's own copy of the texts (`_stored_matches`).
        """
        ids = list(ids)
        if not parsed.verbatim or not ids:
            return set()
        if texts is not None:
            found = texts(ids)
            return {
                i
                for i, t in found.items()
                if all(term in fold(t).casefold() for term in parsed.verbatim)
            }
        return self._stored_matches(parsed, ids)

    @abstractmethod
    def _stored_matches(self, parsed: ParsedQuery, ids: Sequence[int]) -> set[int]:
        """`keyword_matches` on the index's copy of the texts (`ids` and the terms not empty)."""

    @abstractmethod
    def containing(self, parsed: ParsedQuery) -> list[int]:
        """Every record whose text contains each typed term (3+ chars) verbatim, by id: an
        exact, unranked match, for acting on everything a query names (forgetting)."""

    @abstractmethod
    def term_counts(self, terms: Sequence[str]) -> Counts | None:
        """The records, their tokens and the records holding each word of `terms` (for BM25
        over several indexes, `_lexical`)."""

    @abstractmethod
    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        """Each of these records' length in tokens and how often it holds each of the query's
        terms (a phrase's words space-separated)."""

    def scripts_written(self, words: Sequence[str], df: Mapping[str, int]) -> frozenset[str]:
        """The scripts of `words` this index writes some word in (`Counts.scripts`): those of
        a word it holds (`df`: records by word), the rest asked of the index once
        (`_writes_in`; a script found absent is asked again once the records moved by
        `_CENSUS_DRIFT`: a conversation's every turn would ask it again)."""
        records = self._count[1] if self._count is not None else 0
        at = self._unwritten[0]
        if at < 0 or abs(records - at) > _CENSUS_DRIFT * at:
            self._unwritten = (records, set())
        out: set[str] = set()
        for word in words:
            name = script(word)
            if not name or name in out:
                continue
            if df.get(word) or name in self._written:
                out.add(name)
            elif name in SCRIPT_SPANS and name not in self._unwritten[1]:
                found = self._writes_in(*SCRIPT_SPANS[name])
                (self._written if found else self._unwritten[1]).add(name)
                if found:
                    out.add(name)
        return frozenset(out)

    @abstractmethod
    def _writes_in(self, low: str, high: str) -> bool:
        """Whether the index holds a word starting with a code point in [`low`, `high`)."""

    def search(
        self,
        query: str,
        qvec: QueryVector,
        k: int = 10,
        mode: Mode = "hybrid",
        *,
        fusion: Literal["rrf", "weighted"] = "rrf",
        boost: float = 0.3,
        where: str | None = None,
        params: Sequence[object] = (),
        depth: int | None = None,
        rrf_k: int = RRF_K,
        weights: tuple[float, float] = (1.0, 1.0),
        texts: TextLookup | None = None,
    ) -> list[Hit]:
        """The top `k` of `retrieve` over this index alone, the policy given as keywords (for
        scripts, benchmarks and examples; services build a `Policy` and call `retrieve`)."""
        policy = Policy(fusion, rrf_k, weights, boost, depth=depth)
        scope = Scope(self, where, tuple(params))
        return retrieve(scope, query, qvec, k, mode, policy, texts=texts).top(k)

    # -- filling vectors -----------------------------------------------------------------------
    def fill_vectors(
        self,
        embedder: Embedder,
        pending: Sequence[tuple[int, str]],
        *,
        batch: int = FILL_BATCH,
        donors: Mapping[str, int] | None = None,
        progress: FillProgress | None = None,
        on_batch: Callable[[Sequence[int]], None] | None = None,
        guard: AbstractContextManager[object] | None = None,
        hint: str = FILL_HINT,
    ) -> FillReport:
        """Give these (record id, embedding text) records their vectors; the caller has bound
        the space (`bind_vectors`).

        A record whose `text_key` is in `donors` (key -> a record that has the vector) gets a
        copy. The rest are deduplicated by text, sorted shortest first (little padding per
        batch) and embedded `batch` texts at a time; a text longer than the model's input limit
        gets one vector per part. Each batch is one transaction, with `on_batch(ids)` inside it
        so the owner's own bookkeeping commits with the vectors. Only reads and writes hold
        `guard` (the owner's lock on a shared connection): embedding, the slow part, never does.
        An `EmbedderError` stops the fill; what was stored stays, the rest is `pending`.
        """
        report = FillReport()
        if not pending:
            return report
        if not self.has_vectors:
            report.pending = len(pending)
            return report
        guard = guard or contextlib.nullcontext()
        rows: dict[str, list[int]] = {}
        texts: dict[str, str] = {}
        for rowid, text in pending:
            key = text_key(text)
            rows.setdefault(key, []).append(int(rowid))
            texts.setdefault(key, text)
        total, done = len(pending), 0

        def store(items: list[tuple[int, np.ndarray]]) -> None:
            nonlocal done
            with guard, self.db.transaction():
                self.set_vectors(items)
                if on_batch is not None:
                    on_batch([i for i, _ in items])
            done += len(items)
            if progress is not None:
                progress(done, total)

        wanted = {k: donors[k] for k in rows if donors and k in donors}
        if wanted:
            with guard:
                found = self.vectors_of(sorted(set(wanted.values())))
            copies = [(k, found[d]) for k, d in wanted.items() if d in found]
            store([(i, v) for k, v in copies for i in rows.pop(k)])
        keys = sorted(rows, key=lambda k: len(texts[k]))
        try:
            for start in range(0, len(keys), batch):
                part = keys[start : start + batch]
                began = time.perf_counter()
                vectors = embed_parts(embedder, [texts[k] for k in part])
                report.seconds += time.perf_counter() - began
                store([(i, v) for k, v in zip(part, vectors, strict=True) for i in rows[k]])
                report.embedded += len(part)
        except EmbedderError as exc:
            report.pending = total - done
            report.error = str(exc)
            report.warning = f"{report.pending} texts not embedded yet ({exc}); {hint}"
        report.reused = done - report.embedded
        return report
