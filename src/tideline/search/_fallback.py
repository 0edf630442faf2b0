"""Graceful degradation: when the query cannot be embedded, search lexically and say so."""

from __future__ import annotations

import logging

import numpy as np

from tideline.embed import Embedder
from tideline.errors import EmbedderError
from tideline.search._text import valid_text

log = logging.getLogger(__name__)


def query_vector(embedder: Embedder | None, text: str) -> tuple[np.ndarray | None, str | None]:
    """The query's vector, or (None, warning) when there is no embedder or it is down."""
    if embedder is None or embedder.dim == 0:
        return None, None
    try:
        return embedder.embed_query(valid_text(text)), None
    except EmbedderError as exc:
        warning = f"vector search skipped, results are lexical only: {exc}"
        log.warning(warning)
        return None, warning
