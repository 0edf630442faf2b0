"""Tokens and trimming: every tier is cut to its own budget before it reaches the model.

Counting uses the embedder's `count_tokens`: a real tokenizer when the backend has one (the
bundled e5 counts with its own sentencepiece vocabulary), the documented estimate when it does
not (the OpenAI-compatible backend); with no embedder, `tideline.embed.estimate_tokens` itself
(about 4 characters a token, CJK one a character; ±30% for English prose). A tokenizer that
fails mid-way falls back to the estimate for the rest of the run and says so: counting never
raises.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from tideline.embed import Embedder, estimate_tokens

log = logging.getLogger(__name__)

ELLIPSIS = " […]"


class TokenCounter:
    """Counts tokens of rendered text; remembers counts of texts it has seen (blocks repeat)."""

    def __init__(self, embedder: Embedder | None = None):
        self._count: Callable[[str], int] = estimate_tokens
        self.method = "estimate (~4 characters a token, CJK 1 a character)"
        self.warning: str | None = None
        if embedder is not None and getattr(embedder, "model_id", "none") != "none":
            self._count = embedder.count_tokens
            self.method = f"count_tokens of {embedder.model_id}"
        self._seen: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        cached = self._seen.get(text)
        if cached is not None:
            return cached
        try:
            n = int(self._count(text))
        except Exception as exc:  # a broken tokenizer must not break the agent's turn
            log.warning("token counting fell back to the estimate: %s", exc)
            self.warning = f"tokenizer failed ({type(exc).__name__}); counts are estimates"
            self._count = estimate_tokens
            self.method = "estimate (~4 characters a token, CJK 1 a character)"
            n = estimate_tokens(text)
        if len(self._seen) < 50_000:
            self._seen[text] = n
        return n


def trim_to_tokens(text: str, limit: int, count: Callable[[str], int]) -> str:
    """The longest prefix of `text` (cut at a word boundary, marked with […]) within `limit`.

    Returns "" when not even one word fits. Binary search over word boundaries: ~log2(words)
    counts, so a long SOUL.md costs a dozen tokenizer calls, not thousands.
    """
    if limit <= 0:
        return ""
    if count(text) <= limit:
        return text
    cuts = [i for i, ch in enumerate(text) if ch.isspace() and i > 0]
    if len(cuts) < len(text) // 40:  # unspaced scripts (CJK): cut between any two characters
        cuts = list(range(1, len(text)))
    lo, hi, best = 0, len(cuts) - 1, ""
    while lo <= hi:
        mid = (lo + hi) // 2
        candidate = text[: cuts[mid]].rstrip() + ELLIPSIS
        if count(candidate) <= limit:
            best, lo = candidate, mid + 1
        else:
            hi = mid - 1
    return best if best.strip() != ELLIPSIS.strip() else ""
