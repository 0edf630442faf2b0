"""Hybrid search: safe FTS5 queries, BM25 + trigram, sqlite-vec KNN, RRF and weighted fusion."""

from tideline.search._fallback import query_vector
from tideline.search._fusion import RRF_K, rrf_fuse, weighted_fuse
from tideline.search._index import Fill, TextIndex
from tideline.search._query import (
    MAX_QUERY_CHARS,
    MAX_TERM_CHARS,
    MAX_TERMS,
    ParsedQuery,
    bound_query,
    parse_query,
)
from tideline.search._text import has_cjk, spaced_cjk, valid_text
from tideline.search._types import MODES, Hit, Mode

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "MAX_TERM_CHARS",
    "MODES",
    "RRF_K",
    "Fill",
    "Hit",
    "Mode",
    "ParsedQuery",
    "TextIndex",
    "bound_query",
    "has_cjk",
    "parse_query",
    "query_vector",
    "rrf_fuse",
    "spaced_cjk",
    "valid_text",
    "weighted_fuse",
]
