"""Hybrid search: safe FTS5 queries, BM25 + trigram, sqlite-vec KNN (or, on PostgreSQL, tsvector
and pgvector), and one retrieval path (`retrieve`) whose every ranking stage — candidates,
lexical statistics, aggregation, fusion, levers, the time window a question names, the relevance score, the floor, diversity and
truncation — a per-use `Policy` configures. Every search returns `Hit`s in a `SearchResult`."""

from tideline.search._analyse import (
    ANALYSERS,
    DEFAULT_ANALYSER,
    STOP_WORDS,
    Analyser,
    analyse,
    load_jieba,
)
from tideline.search._fallback import QueryVector, pending_vector, query_vector, resolved
from tideline.search._file_health import damaged_search_files
from tideline.search._fusion import RRF_K, fuse, ranks, rrf_fuse, weighted_fuse
from tideline.search._hits import KINDS, MODES, Hit, Mode, Policy, SearchResult
from tideline.search._index import SqliteTextIndex, TextIndex
from tideline.search._index_base import FillReport, IndexBase, text_key
from tideline.search._knn import VectorOptions
from tideline.search._levers import (
    Answer,
    Groups,
    Key,
    Lever,
    Mark,
    Near,
    Reply,
    Targets,
    diversify,
    lift,
)
from tideline.search._lexical import Counts, Freqs
from tideline.search._open import create_index, open_index
from tideline.search._pg_index import PgTextIndex
from tideline.search._query import (
    MAX_QUERY_CHARS,
    MAX_TERM_CHARS,
    MAX_TERMS,
    ParsedQuery,
    bound_query,
    parse_query,
)
from tideline.search._retrieve import (
    Candidates,
    Parents,
    Recency,
    Scope,
    TextLookup,
    literal_dashes,
    parsed_for,
    retrieve,
)
from tideline.search._score import auto_floor, by_best, check_floor, interleave, resolve_floor
from tideline.search._text import spaced_cjk, valid_text
from tideline.search._time_window import (
    TimeWindow,
    WindowSetting,
    found_nothing_in,
    window_setting,
)

__all__ = [
    "ANALYSERS",
    "DEFAULT_ANALYSER",
    "KINDS",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "MAX_TERM_CHARS",
    "MODES",
    "RRF_K",
    "STOP_WORDS",
    "Analyser",
    "Answer",
    "Candidates",
    "Counts",
    "FillReport",
    "Freqs",
    "Groups",
    "Hit",
    "IndexBase",
    "Key",
    "Lever",
    "Mark",
    "Mode",
    "Near",
    "Parents",
    "ParsedQuery",
    "PgTextIndex",
    "Policy",
    "QueryVector",
    "Recency",
    "Reply",
    "Scope",
    "SearchResult",
    "SqliteTextIndex",
    "Targets",
    "TextIndex",
    "TextLookup",
    "TimeWindow",
    "VectorOptions",
    "WindowSetting",
    "analyse",
    "auto_floor",
    "bound_query",
    "by_best",
    "check_floor",
    "create_index",
    "damaged_search_files",
    "diversify",
    "found_nothing_in",
    "fuse",
    "interleave",
    "lift",
    "literal_dashes",
    "load_jieba",
    "open_index",
    "parse_query",
    "parsed_for",
    "pending_vector",
    "query_vector",
    "ranks",
    "resolve_floor",
    "resolved",
    "retrieve",
    "rrf_fuse",
    "spaced_cjk",
    "text_key",
    "valid_text",
    "weighted_fuse",
    "window_setting",
]
