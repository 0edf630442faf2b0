"""The baseline the turn search is timed against: what anyone would build from SQLite and e5.

BM25 over the turns' own text (FTS5, `unicode61`, every word of the question OR-ed, FTS5's own
`bm25()`), the k nearest turn vectors (one numpy matrix product), fused by RRF (k = 60): no
analyser, no context keys, no levers, no relevance. It shares the product's turn vectors and is
timed in the same run, on the same turns, the query embedded by the same model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import apsw
import numpy as np

_WORD = re.compile(r"\w+")


class PlainBaseline:
    """A plain FTS5 + e5 index over one conversation's turns (in memory)."""

    def __init__(self, rows: Sequence[tuple[int, str]], ids: np.ndarray, matrix: np.ndarray):
        self.db = apsw.Connection(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE turns USING fts5(text)")
        with self.db:
            self.db.executemany("INSERT INTO turns(rowid, text) VALUES (?, ?)", rows)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.ids = ids
        self.matrix = matrix / np.where(norms == 0.0, 1.0, norms)

    def search(self, query: str, qvec: np.ndarray, k: int, depth: int = 40) -> list[int]:
        """The top `k` turn ids for `query` and its vector."""
        words = _WORD.findall(query)
        lexical: list[int] = []
        if words:
            match = " OR ".join(f'"{w}"' for w in words)
            lexical = [
                int(r[0])
                for r in self.db.execute(
                    "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                    (match, depth),
                )
            ]
        sims = self.matrix @ (qvec / (np.linalg.norm(qvec) or 1.0))
        top = np.argpartition(-sims, min(depth, len(sims) - 1))[:depth]
        vector = [int(self.ids[i]) for i in top[np.argsort(-sims[top])]]
        fused: dict[int, float] = {}
        for ranked in (lexical, vector):
            for rank, i in enumerate(ranked, 1):
                fused[i] = fused.get(i, 0.0) + 1.0 / (60 + rank)
        return sorted(fused, key=lambda i: -fused[i])[:k]

    def close(self) -> None:
        self.db.close()
