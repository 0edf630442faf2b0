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
- `N_vec`, `N_vecpart`: the vectors, pgvector HNSW (`_pg_vectors`).
Ranks: `ts_rank` picks the tsvector list's candidates, over a bounded candidate set when the
query holds frequent words (`_ranked`); `term_counts` / `term_freqs` give `_lexical` the same
term statistics as FTS5 gives on SQLite (records holding a word through the GIN index, each
candidate's positions), so BM25, the lexical evidence and the relevance are the same numbers on
both engines. Cosine distance for vectors (the same numbers as sqlite-vec's). The fill
(`fill_vectors`), `search` and the query's cut are `IndexBase`'s; nothing is kept beside the
database (no vector or lexical file: the server's indexes serve).

The class is built in layers, one concept a module, each above the last, as SQLite's is:
`IndexBase` (what both engines share), `PgTerms` (term statistics), `PgVectors` (vectors and
KNN), and here the tables' creation, the writes and the ranked tsvector list.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Literal, cast

from tideline.search._analyse import DEFAULT_ANALYSER, Analyser, analyse
from tideline.search._hits import Hit
from tideline.search._index_base import IndexBase, KeyLookup
from tideline.search._knn import FileSearch
from tideline.search._lexical import positive_terms
from tideline.search._pg_terms import FREQUENT_SHARE, like_literal, tsquery
from tideline.search._pg_vectors import PgVectors
from tideline.search._query import ParsedQuery
from tideline.search._terms import FTS_STRING, plain
from tideline.store import Storage


def _best(row: tuple[int, float]) -> tuple[float, int]:
    """A ranked match's order: the best rank first, then the lowest id."""
    return (-row[1], row[0])


#: Matches of the whole query ranked, newest first, when the stages before found too few.
FREQUENT_SAMPLE = 1_000


class PgTextIndex(PgVectors):
    """`IndexBase` over PostgreSQL tables (see the module docstring)."""

    def __init__(
        self, db: Storage, name: str, analyser: Analyser = DEFAULT_ANALYSER, keys: str = ""
    ):
        self._trigram_index = False
        super().__init__(db, name, analyser, keys)

    # -- tables and what made them -------------------------------------------------------------
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
        self._forget_ahead()
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

    # -- beside the database: nothing (the server's GIN and HNSW indexes serve) ---------------
    def lexical_source(self, keys: KeyLookup, ids: Callable[[], Sequence[int]]) -> None:
        """PostgreSQL keeps no lexical file: the owner's keys are not needed."""

    def build_lexical_file(self, guard: AbstractContextManager[object] | None = None) -> bool:
        return False

    def lexical_file_due(self) -> bool:
        return False

    def large_vector_file(self) -> FileSearch | None:
        return None

    # -- writes --------------------------------------------------------------------------------
    def text_ids(self) -> set[int]:
        return {r[0] for r in self.db.execute(f"SELECT rowid FROM {self.name}_text")}

    def upsert_many(
        self, items: Sequence[tuple[int, str]], keys: Mapping[int, str] | None = None
    ) -> None:
        """(Re)index texts; `keys` gives a record the lexical key the tsvector is made of
        instead of its text (substrings and keyword checks keep the text)."""
        self._forget_ahead()
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
        self._forget_ahead()
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
    def lexical(
        self,
        query: str | ParsedQuery,
        k: int,
        where: str | None = None,
        params: Sequence[object] = (),
        *,
        trigram: Literal["top_up", "fallback"] = "top_up",
    ) -> list[Hit]:
        """`IndexBase.lexical`, its term statistics checked inside the ranking statement
        (`_check_stats` was a statement of its own each search): the last search's are assumed
        and read again beside the ranks; when they moved (another ANALYZE, records written)
        the list is made again on the new ones, as a search that asked first would have."""
        self._stats_mode = "assume" if self._count is not None and self._analysed else "ask"
        self._local.trigram, self._local.subs = trigram, None
        self._local.outer = query if isinstance(query, ParsedQuery) else None
        try:
            hits = super().lexical(query, k, where, params, trigram=trigram)
            # "moved": the ranking statement found them moved; "assume": none was ranked
            mode: str = self._stats_mode  # as `_ranked` left it
            moved = mode == "moved" or (mode == "assume" and self._read_stats())
            if moved:
                self._stats_mode = "known"
                hits = super().lexical(query, k, where, params, trigram=trigram)
        finally:
            self._stats_mode = "ask"
            self._local.trigram = self._local.subs = self._local.outer = None
        self._expect(query if isinstance(query, ParsedQuery) else None, [h.id for h in hits])
        return hits

    def _matches(
        self, parsed: ParsedQuery, k: int, where: str | None, params: Sequence[object]
    ) -> list[Hit]:
        """The tsvector list (`_ranked`)."""
        extra = f" AND {where}" if where else ""
        return [
            Hit(i, lex_rank=n, lex_score=r, lex_source="bm25")
            for n, (i, r) in enumerate(self._ranked(parsed, k, extra, params), 1)
        ]

    def _substrings(
        self, parsed: ParsedQuery, k: int, where: str | None, params: Sequence[object]
    ) -> list[tuple[int, float]]:
        """By how many of the typed terms each record holds, as on SQLite: through the trigram
        GIN index when pg_trgm is there, else a scan. Asked by the ranking statement already
        (`_ranked`, gated on what it found): its answer."""
        ready, self._local.subs = getattr(self._local, "subs", None), None
        if ready is not None:
            return list(ready)
        if self._stats_mode == "moved":  # the list is made again: nothing to top up
            return []
        asked = self._substrings_sql(parsed, k, f" AND {where}" if where else "", params)
        if asked is None:
            return []
        rows = self.db.execute(*asked).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def _substrings_sql(
        self, parsed: ParsedQuery, k: int, extra: str, params: Sequence[object]
    ) -> tuple[str, list[object]] | None:
        """`_substrings`' statement (rowid, n) and its parameters (`extra`: " AND " the
        scope's condition, or nothing); None: no typed term."""
        terms = [plain(t) for t in parsed.verbatim]
        if not terms:
            return None
        skip = [
            plain(b.replace('""', '"'))
            for b, _ in FTS_STRING.findall(parsed.exclude or "")
            if len(b) >= 3
        ]
        found = " + ".join("(strpos(body, ?) > 0)::int" for _ in terms)
        noneof = "".join(" AND strpos(body, ?) = 0" for _ in skip)
        if self._trigrams():  # `LIKE '%…%'` is what a trigram GIN index serves
            anyof = " OR ".join("body LIKE ? ESCAPE '\\'" for _ in terms)
            wanted_terms: list[str] = [f"%{like_literal(t)}%" for t in terms]
        else:  # no pg_trgm: a scan of the namespace's texts
            anyof = " OR ".join("strpos(body, ?) > 0" for _ in terms)
            wanted_terms = terms
        return (
            f"SELECT rowid, {found} AS n FROM {self.name}_text"
            f" WHERE ({anyof}){noneof}{extra} ORDER BY n DESC, rowid LIMIT ?",
            [*terms, *wanted_terms, *skip, *params, k],
        )

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
        full = tsquery(parsed)
        if full is None:
            return []
        frequent = self._frequent(parsed.terms)
        rare = [t for t in parsed.terms if t not in frequent]
        stages: list[tuple[tuple[str, list[object]], bool]]
        if not frequent:
            stages = [(full, False)]
        else:
            both = tsquery(parsed, frequent, " && ") if len(frequent) > 1 else None
            stages = [(m, False) for m in (tsquery(parsed, rare) if rare else None, both) if m]
            stages.append((full, True))
        # the words the search's term statistics will ask for too (`lexicon`, of the query as
        # the search parsed it, before this index's cut): counted here, not in a statement more
        outer = getattr(self._local, "outer", None)
        asked = positive_terms(parsed) + (positive_terms(outer) if outer is not None else [])
        todo = self._to_count([w for t in asked for w in t.split()], self._stats_records())
        subs = self._topped_up(parsed, k, extra, params)
        sql, sql_params = self._stages(full, stages, k, extra, params, todo, subs)
        rows = self.db.execute(sql, sql_params).fetchall()
        if self._stats_mode == "assume":  # the statistics this statement was made on
            self._stats_mode = "known"
            if self._took_stats(next((r[3] for r in rows if r[0] == -2), None)):
                self._stats_mode = "moved"  # `lexical` makes the list again
                return []
        if subs:  # the substring top-up, asked beside the ranks (`_stages`)
            self._local.subs = [(int(r[1]), float(r[2])) for r in rows if r[0] == -3]
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
        subs: tuple[str, list[object], bool] | None = None,
    ) -> tuple[str, list[object]]:
        """`_ranked`'s statement: rows (stage, rowid, rank, NULL), and (-1, NULL, NULL, the
        record counts of `todo`) when there are words to count; with `subs` (`_topped_up`),
        (-3, rowid, substring score, NULL) for the top-up `lexical` makes when the stages
        found fewer than `k` (for "fallback": none); with the statistics assumed
        (`lexical`), (-2, NULL, NULL, `_stats_sql`'s answer)."""
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
        if subs is not None:
            sub_sql, sub_params, fallback = subs
            counted = " + ".join(f"(SELECT count(*) FROM s{n})" for n in range(len(stages)))
            gate = f"({counted}) = 0" if fallback else f"({counted}) < ?"
            ctes.append(
                f"subs AS MATERIALIZED (SELECT rowid, n FROM ({sub_sql}) AS found WHERE {gate})"
            )
            values += [*sub_params, *([] if fallback else [k])]
        picked = " UNION ALL ".join(
            f"SELECT {n} AS stage, rowid, r, NULL::bigint[] AS n FROM s{n}"
            for n in range(len(stages))
        )
        if subs is not None:
            picked += " UNION ALL SELECT -3, rowid, n::real, NULL FROM subs"
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
        if self._stats_mode == "assume":
            stats, stats_params = self._stats_sql()
            picked += f" UNION ALL SELECT -2, NULL, NULL, {stats}"
            values += stats_params
        return f"WITH {', '.join(ctes)} {picked}", values

    def _topped_up(
        self, parsed: ParsedQuery, k: int, extra: str, params: Sequence[object]
    ) -> tuple[str, list[object], bool] | None:
        """The substring top-up `lexical` will ask for when the ranks come back short, as a
        part of the ranking statement (`_stages`): its SQL, parameters and whether it is
        "fallback" (only when nothing was ranked); None outside `lexical` or without a typed
        term."""
        trigram = getattr(self._local, "trigram", None)
        if trigram is None:
            return None
        asked = self._substrings_sql(parsed, k, extra, params)
        return None if asked is None else (asked[0], asked[1], trigram == "fallback")

    def _frequent(self, terms: Sequence[str]) -> list[str]:
        """The single-word terms in over `FREQUENT_SHARE` of the records."""
        words = {t: t[1:-1] for t in terms if t.startswith('"') and t.endswith('"')}
        words = {t: w for t, w in words.items() if w and " " not in w and '""' not in w}
        share = self._shares(list(words.values())) if words else {}
        return [t for t, w in words.items() if share.get(w, 0.0) > FREQUENT_SHARE]

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
