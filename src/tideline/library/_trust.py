"""How far to trust the lexical list of one query: by how much of the query its best hit covers.

BM25 ranks whatever shares a word with the query. When the query's words are in the notes (a
command line, a name, a phrase in the notes' language) its best hit contains most of them and
the lexical list is the sharpest signal there is. When they are not (a question in Russian or
Chinese over English notes, a paraphrase) the best hit shares one stray token — a transliterated
name, `GNU` — and the list is mostly noise that would pull good vector hits down in the fusion.
So the lexical list's weight in the fusion scales with the share of the query's content words
(stop words left out, both sides cut by the lexical analyser) that its best hit contains:

    weight = floor + (1 − floor) · coverage²

A query fully covered keeps the full weight; one with no content word in common keeps `floor`.
The square: a query half covered is most often a translated one that kept a name or a stray
token, and once the vector list is centred (`search/_centre.py`) it is the sharper list there;
on the tldr library the linear rule made the fusion lose to the vector list alone on translated
summaries (docs/benchmarks.md).
"""

from __future__ import annotations

from functools import lru_cache

from tideline.search import STOP_WORDS, analyse


@lru_cache(maxsize=1)
def _stops() -> frozenset[str]:
    return frozenset(t for w in STOP_WORDS for t in analyse(w).split())


def coverage(query: str, text: str) -> float:
    """The share of the query's content terms that `text` contains (1.0 for a query of stop
    words only, which has nothing to judge by)."""
    content = set(analyse(query).split()) - _stops()
    if not content:
        return 1.0
    found = set(analyse(text).split())
    return len(content & found) / len(content)


def lexical_weight(query: str, best_text: str, floor: float) -> float:
    """The lexical list's weight for this query (see the module docstring)."""
    return floor + (1.0 - floor) * coverage(query, best_text) ** 2
