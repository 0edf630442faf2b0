"""Search result types: every hit carries the parts its score was made of."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Mode = Literal["hybrid", "lex", "vec"]
MODES: tuple[str, ...] = ("hybrid", "lex", "vec")


@dataclass
class Hit:
    """One record found. `id` is the record's rowid in its owner table.

    lex_rank / lex_score: position and BM25 score (higher is better) in the lexical list;
    lex_source: "bm25" or "trigram" (substring fallback); vec_rank / vec_distance: position and
    cosine distance in the vector list; keyword_match: the record contains every query word
    verbatim; score: the fused score that ordered the results.
    """

    id: int
    score: float = 0.0
    lex_rank: int | None = None
    lex_score: float | None = None
    lex_source: str | None = None
    vec_rank: int | None = None
    vec_distance: float | None = None
    keyword_match: bool = False

    def absorb(self, other: Hit) -> None:
        """Copy the score parts `other` knows into this hit."""
        for name in ("lex_rank", "lex_score", "lex_source", "vec_rank", "vec_distance"):
            value = getattr(other, name)
            if value is not None and getattr(self, name) is None:
                setattr(self, name, value)
        self.keyword_match = self.keyword_match or other.keyword_match

    def parts(self) -> dict[str, Any]:
        return asdict(self)
