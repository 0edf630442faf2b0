"""Hybrid search: safe FTS5 queries, BM25 + trigram, sqlite-vec KNN (or, on PostgreSQL, tsvector
and pgvector), and one retrieval path (`retrieve`) that fuses them by a per-use `Policy`."""

from tideline.search._analyse import (
    ANALYSERS,
    DEFAULT_ANALYSER,
    STOP_WORDS,
    Analyser,
    analyse,
)
from tideline.search._fallback import QueryVector, pending_vector, query_vector, resolved
from tideline.search._fusion import RRF_K, fuse, ranks, rrf_fuse, weighted_fuse
from tideline.search._index import FillReport, TextIndex, text_key
from tideline.search._knn import VectorOptions
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
from tideline.search._rerank import diversify, lift
from tideline.search._retrieve import Candidates, Scope, TextLookup, literal_dashes, retrieve
from tideline.search._text import has_cjk, spaced_cjk, valid_text
from tideline.search._types import MODES, Hit, Mode, Policy, Retrieval

__all__ = [
    "ANALYSERS",
    "DEFAULT_ANALYSER",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "MAX_TERM_CHARS",
    "MODES",
    "RRF_K",
    "STOP_WORDS",
    "Analyser",
    "Candidates",
    "FillReport",
    "Hit",
    "Mode",
    "ParsedQuery",
    "PgTextIndex",
    "Policy",
    "QueryVector",
    "Retrieval",
    "Scope",
    "TextIndex",
    "TextLookup",
    "VectorOptions",
    "analyse",
    "bound_query",
    "create_index",
    "diversify",
    "fuse",
    "has_cjk",
    "lift",
    "literal_dashes",
    "open_index",
    "parse_query",
    "pending_vector",
    "query_vector",
    "ranks",
    "resolved",
    "retrieve",
    "rrf_fuse",
    "spaced_cjk",
    "text_key",
    "valid_text",
    "weighted_fuse",
]
