"""`PgTerms`: the term statistics of a PostgreSQL index — the lowest layer of `PgTextIndex`
(`_pg_index`), over the `tsv` column of `N_text` the top layer writes.

BM25 over several indexes (`_lexical.rescore`) needs the same numbers FTS5 gives on SQLite
(`_sqlite_terms`): an index's records, their tokens and the records holding each word
(`term_counts`), and each candidate's length and count of each of the query's terms
(`term_freqs`, from the tsvector's positions). PostgreSQL gives them at a price of its own:
- one statement per search (`_check_stats`) reads the records — counted below `_ESTIMATE_FROM`,
  from there PostgreSQL's estimate — and how often the table was analysed; the rest of that
  search (`_shares`, `term_counts`, BM25) reads its answer;
- a word's records are counted through the GIN index (`@@`), every word of a query in one pass,
  kept until the index changes; from `_ESTIMATE_FROM` records a frequent word's (over
  `FREQUENT_SHARE`) is its share of the estimate, from PostgreSQL's own lexeme statistics
  (`_shares`, read again only after another ANALYZE);
- the tokens are the records times their mean length, measured again once the records moved by
  `_TOKENS_DRIFT` (on a block sample above `_ESTIMATE_FROM`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Literal

from tideline.search._analyse import DEFAULT_ANALYSER, Analyser
from tideline.search._index_base import IndexBase
from tideline.search._lexical import Counts, Freqs, term_key
from tideline.search._query import ParsedQuery
from tideline.search._terms import fts_strings, plain, tokens
from tideline.store import Storage

#: Term statistics (`term_counts`): from this many records the record count is PostgreSQL's
#: estimate and the mean record length a sample's (~`_SAMPLE` records), measured again when
#: the records moved by `_TOKENS_DRIFT`; terms whose record counts are kept, `_KNOWN_TERMS`.
_ESTIMATE_FROM = 50_000
_SAMPLE = 20_000
_TOKENS_DRIFT = 0.01
_KNOWN_TERMS = 20_000
#: The records whose words `_writes_in` reads for the scripts an index writes in.
_CENSUS = 2_000
#: `_check_stats`' answer serves the rest of the search that asked it, for at most this long.
_FRESH_S = 1.0

#: A term in more of the records than this is *frequent*: its matches are not all ranked.
FREQUENT_SHARE = 0.01


def like_literal(term: str) -> str:
    """`term` as a literal inside a LIKE pattern (escape character `\\`)."""
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


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


def tsquery(
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


def _freqs(
    rows: Sequence[Sequence[object]], phrases: Sequence[tuple[str, list[str], bool]]
) -> dict[int, Freqs]:
    """`term_freqs` from its statement's rows (`PgTerms._freqs_sql`)."""
    out: dict[int, Freqs] = {}
    for rowid, length, packed in rows:
        at: dict[str, set[int]] = {}
        for item in packed or ():  # type: ignore[attr-defined]
            lexeme, _, positions = str(item).rpartition(":")
            at[lexeme] = {int(p) for p in positions.split(",") if p}
        tf: dict[str, int] = {}
        for key, words, star in phrases:
            n = _occurrences(at, words, star)
            if n:
                tf[key] = tf.get(key, 0) + n
        out[int(str(rowid))] = (int(str(length)), tf)
    return out


class PgTerms(IndexBase):
    """The term statistics of a PostgreSQL index (see the module docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        #: `_shares`' lexeme frequencies and the ANALYZE they came from (the table's counts)
        self._lexeme_freqs: tuple[tuple[object, ...], dict[str, float]] | None = None
        self._mean_length: tuple[int, float] | None = None  # (records then, tokens a record)
        self._analysed: tuple[object, ...] = ()  # `_check_stats`: the analyze counts
        self._fresh_until = 0.0  # `_check_stats` ran for the search under way until then
        #: How the lexical search under way knows the statistics: "ask" them first
        #: (`_check_stats`), "assume" the last search's (its ranking statement reads them
        #: again, `PgTextIndex.lexical`), "moved" (that statement found them moved: the list
        #: is made again) or "known" (read again for that).
        self._stats_mode: Literal["ask", "assume", "moved", "known"] = "ask"
        super().__init__(db, name, analyser, keys)

    def _parsed(self, query: str | ParsedQuery) -> ParsedQuery | None:
        """The query as `IndexBase` cuts it, the statistics read first: once for this search
        (`_shares`, the counts and BM25 read them)."""
        if self._stats_mode == "ask":
            self._check_stats()
        else:
            self._fresh_until = time.monotonic() + _FRESH_S
        return super()._parsed(query)

    def _many_records(self) -> bool:
        """PostgreSQL's statistics (`_shares`) only know the most common lexemes of a
        table ANALYZE has seen: enough to judge by."""
        return True

    def _check_stats(self) -> int:
        """One statement: the records of `N_text` and how often it was analysed — below
        `_ESTIMATE_FROM` records counted, from there PostgreSQL's own estimate
        (`pg_class.reltuples`, kept by autovacuum / ANALYZE; a count scans the table). Each
        lexical search asks it once — after the first, inside its ranking statement
        (`PgTextIndex.lexical`) — and the rest of that search (`_shares`, `term_counts`)
        reads the answer: the lexeme statistics are read again after another ANALYZE, the
        terms' record counts (`_records_with`) forgotten when the records moved (or after a
        write through this handle, below the estimate)."""
        self._read_stats()
        assert self._count is not None
        return self._count[1]

    def _stats_sql(self) -> tuple[str, tuple[object, ...]]:
        """`_check_stats`' question as one value (its answer is `_took_stats`'), for a
        statement of its own or a row of the ranking statement."""
        return (
            "(SELECT ARRAY[trunc(c.reltuples)::bigint, pg_stat_get_analyze_count(c.oid),"
            " pg_stat_get_autoanalyze_count(c.oid),"
            f" CASE WHEN c.reltuples < ? THEN (SELECT count(*) FROM {self.name}_text) END]"
            " FROM pg_class c WHERE c.oid = to_regclass(?))",
            (_ESTIMATE_FROM, f"{self.name}_text"),
        )

    def _read_stats(self) -> bool:
        """`_check_stats` in a statement of its own; whether they moved since last read."""
        sql, params = self._stats_sql()
        row = self.db.execute(f"SELECT {sql}", params).fetchone()
        return self._took_stats(row[0] if row else None)

    def _took_stats(self, values: Sequence[object] | None) -> bool:
        """Keep `_stats_sql`'s answer; whether it differs from the one kept (the records, or
        the analyses: a search made on the kept ones is made again)."""
        estimate, analysed, autoanalysed, counted = values if values is not None else (0, 0, 0, 0)
        if counted is None:
            records, writes = int(str(estimate)), -1  # counts kept until the estimate moves
        else:
            records, writes = int(str(counted)), self._text_writes
        version = (records, writes)
        moved = self._analysed != (analysed, autoanalysed)
        if self._count is None or self._count[0] != version:
            moved = True
            self._count = (version, records)
            self._records_with.clear()
        self._analysed = (analysed, autoanalysed)
        self._fresh_until = time.monotonic() + _FRESH_S
        return moved

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
        df = {w: self._records_with.get(w, 0) for w in words}
        return Counts(records, self._stats_tokens(records), df, self.scripts_written(words, df))

    def _writes_in(self, low: str, high: str) -> bool:
        """A word in the range among the lexemes of `_CENSUS` records (a tsvector has no
        vocabulary to range over; any records: a script a library writes in is seldom rare)."""
        row = self.db.execute(
            f"SELECT EXISTS (SELECT 1 FROM (SELECT tsv FROM {self.name}_text LIMIT {_CENSUS}) s,"
            ' unnest(tsvector_to_array(s.tsv)) w WHERE w COLLATE "C" >= ?'
            ' AND w COLLATE "C" < ?)',
            (low, high),
        ).fetchone()
        return bool(row and row[0])

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
        asked = self._freqs_sql(parsed)
        if asked is None or not ids:
            return {}
        sql, params, phrases = asked
        wanted = [int(i) for i in ids]
        rows = self.db.execute(
            sql.replace("{ids}", "= ANY(?)"), (*params[:2], wanted, *params[2:])
        ).fetchall()
        return _freqs(rows, phrases)

    def _freqs_sql(
        self, parsed: ParsedQuery
    ) -> tuple[str, list[object], list[tuple[str, list[str], bool]]] | None:
        """`term_freqs`' statement: rows (rowid, length, packed positions) of the records whose
        rowid meets `{ids}` (`= ANY(?)`, or `IN (…)`); its parameters before `{ids}`' (the first
        two) and after; the query's phrases. None: nothing of the query to count."""
        ts = tsquery(parsed)
        phrases = [
            (key, tokens(key), t.endswith("*")) for t in parsed.terms if (key := term_key(t))
        ]
        phrases = [p for p in phrases if p[1]]
        if ts is None or not phrases:
            return None
        exact = sorted({w for _, words, star in phrases for w in (words[:-1] if star else words)})
        prefixes = sorted({like_literal(words[-1]) + "%" for _, words, star in phrases if star})
        wanted = "u.lexeme = ANY(?::text[]) OR u.lexeme LIKE ANY(?::text[])"
        q, qparams = ts
        sql = (
            "SELECT t.rowid, (SELECT coalesce(sum(cardinality(u.positions)), 0)"
            " FROM unnest(t.tsv) u), ARRAY(SELECT u.lexeme || ':' || array_to_string(u.positions,"
            f" ',') FROM unnest(t.tsv) u WHERE {wanted}) FROM {self.name}_text t"
            f" WHERE t.rowid {{ids}} AND t.tsv @@ ({q})"
        )
        return sql, [exact, prefixes, *qparams], phrases

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
