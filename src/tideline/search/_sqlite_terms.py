"""`SqliteTerms`: the term statistics of an SQLite index — the lowest layer of
`SqliteTextIndex` (`_index`), over the FTS5 table `N_fts` the top layer writes.

BM25 over several indexes (`_lexical.rescore`) needs, of each index, its records, their tokens
and the records holding each word (`term_counts`), and of each candidate its length and its
count of each of the query's terms (`term_freqs`). FTS5 knows them, at a price:
- records and tokens come from FTS5's averages record (`_averages`, varints brought up to date at
  each commit) instead of `count(*)`, which walks every row;
- a term's records come from `N_vocab` (`fts5vocab`), kept per term until the index changes
  (`_shares`): the same frequent words are asked again and again;
- a candidate's counts come, cheapest first, from `N_terms(id, length, tokens)` (each record as
  FTS5's own tokenizer cut it, read by rowid: `_freqs_from_terms`), from the owner's lexical keys
  analysed again (`_freqs_from_keys`, when the query's words are in many more records than the
  candidates hold tokens), else from FTS5's walk over the query's matches with the
  `tideline_tf` auxiliary function. `lexical_terms` names the indexes whose `N_terms` holds every
  record (made empty, or since `reanalyse`: an older index counts by the walk).
The same numbers as `PgTextIndex` gives from its tsvectors, so a search ranks alike on both.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import apsw

from tideline.search._analyse import DEFAULT_ANALYSER, Analyser, analyse
from tideline.search._index_base import IndexBase, KeyLookup
from tideline.search._key_freqs import KeyCounter, counted, spaced
from tideline.search._lexical import Counts, Freqs
from tideline.search._query import ParsedQuery
from tideline.store import Storage, id_lists

#: A row as apsw returns it (column types are the schema's, which the type checker cannot see).
Row = tuple[Any, ...]


def post_filter(where: str) -> str:
    """The owner's `rowid IN (…)` condition as a check on each FTS5 match, never a constraint
    handed to FTS5: given `rowid IN (subquery)`, SQLite's planner runs the full-text query once
    per listed rowid (`INDEX 0:=M…` in the plan), which took 0.1–12 s per search over 10k live
    narratives or a few weeks of 50k turns; checked after the match (a Bloom filter over the
    list) it takes a few ms. Unary `+` makes the term unusable as a constraint."""
    return f"+({where})"


#: Indexes from this many records drop a query's terms found in over half of them
#: (`_weightless`): in a handful of records "half" is one or two, and the term may be the match.
WEIGHTLESS_FROM = 200

#: `term_freqs` counts in the candidates' keys (`_key_freqs`) once the records holding the
#: query's words are this many times the candidates' tokens: FTS5's walk costs 0.2–0.4 µs a
#: holding record, analysing and counting a key 2–3 µs a token (measured at 200k turns / 20k
#: narratives, docs/benchmarks.md "A million turns").
KEYS_TF_FROM = 10
#: Terms whose record counts an index keeps (`_shares`); past it the memo starts again.
_KNOWN_TERMS = 20_000


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


class SqliteTerms(IndexBase):
    """The term statistics of an SQLite index (see the module docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
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

    def lexical_source(self, keys: KeyLookup, ids: Callable[[], Sequence[int]]) -> None:
        """The owner's lexical keys by id and its record ids: what the lexical file is made of
        (an index without them searches FTS5 only)."""
        self._keys = (keys, ids)

    def _analysed_keys(self, ids: Sequence[int]) -> dict[int, str]:
        """The analysed keys of those of `ids` that `N_fts` holds (the owner keeps some records
        out of the index: a superseded narrative stays readable by id)."""
        assert self._keys is not None
        held: set[int] = set()
        for marks, part in id_lists(ids):
            held.update(
                int(r[0])
                for r in self.db.execute(
                    f"SELECT id FROM {self.name}_fts_docsize WHERE id IN ({marks})", part
                )
            )
        found = self._keys[0](sorted(held))
        return {int(i): analyse(t, self.analyser) for i, t in found.items() if int(i) in held}

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
        self._shares(words)  # reads `_records` once: the counts are all of that reading
        df = {w: self._records_with.get(w, 0) for w in words}
        records = self._count[1] if self._count is not None else 0
        return Counts(records, self._token_count or 0, df, self.scripts_written(words, df))

    def _writes_in(self, low: str, high: str) -> bool:
        """One word of `N_fts` in the range, read from an `instance` vocabulary (the `row`
        one, `N_vocab`, counts the first word's records first: 60–130 ms at a million turns
        against 2 ms); a temporary table of this connection, so no schema changes."""
        self.db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{self.name}_census"
            f" USING fts5vocab(main, {self.name}_fts, 'instance')"
        )
        return bool(
            self.db.scalar(
                f"SELECT 1 FROM temp.{self.name}_census WHERE term >= ? AND term < ? LIMIT 1",
                (low, high),
            )
        )

    def _tokens(self) -> int:
        """Tokens in `N_fts` (`_averages`), as of `_records`' reading."""
        self._records()
        return self._token_count or 0

    def term_freqs(self, parsed: ParsedQuery, ids: Sequence[int]) -> dict[int, Freqs] | None:
        """Each of these records' length in tokens and how often it holds each of the query's
        terms (a phrase's words space-separated), from FTS5 itself (the `tideline_tf`
        auxiliary function) on the query's own matches, checked against `ids` after the match
        (`post_filter`)."""
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
            f"WHERE {self.name}_fts MATCH ? AND {post_filter(f'rowid IN ({marks})')}",
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
        for marks, part in id_lists(ids):
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
