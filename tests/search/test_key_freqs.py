"""Term frequencies counted in the candidates' own keys (issue 25, `search/_key_freqs.py`) and in
their rows of `N_terms` (issue 26).

At a million turns FTS5's walk over every match of a question's words was the largest part of a
turn search, so `TextIndex.term_freqs` counts in the candidates' stored tokens (`N_terms`, read
by rowid), or, in an index made before `N_terms`, in their keys when the words' records far
outnumber the candidates' tokens. The BM25 re-scoring must not notice: for every query (phrases,
exclusions, diacritics, CJK, mixed tokens, stemmed words, neighbours in the keys, words side by
side) the counts are exactly FTS5's own, and records FTS5's query does not match are left out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tideline.clock import system_clock
from tideline.memory import AGENT_MIGRATIONS, NewTurn, RawContext
from tideline.search import parse_query
from tideline.search._key_freqs import KeyCounter
from tideline.store import open_database

WORDS = [f"w{n}" for n in range(300)]
ODD = [
    "Caroline went to the café near the station",
    "Melanie painted a lake sunrise, painting lakes again",
    "東京 の 電車 is crowded; 北京大学 students",
    "build for x86_64 and arm64 with make install",
    "don't stop: naïve résumé of the CAFE meeting",
    "the the the w0 w0 w1 w0 w1",
]
QUERIES = [
    "w0 w1",
    '"w0 w1" w2',
    "w0 -w3",
    "café résumé",
    "Caroline painting lake",
    "東京 電車",
    "北京大学",
    "x86_64 install",
    '"the the"',
    "What did Caroline paint at the cafe?",
    "w0 w5 w7 -w1",
]


@pytest.fixture
def raw(tmp_path: Path) -> RawContext:
    raw = RawContext(
        open_database(tmp_path / "memory.db", AGENT_MIGRATIONS), clock=system_clock
    )  # keys: neighbours
    rng = np.random.default_rng(25)
    for s in range(30):
        ranks = np.minimum(rng.zipf(1.3, size=(100, 10)), len(WORDS)) - 1
        texts = [" ".join(WORDS[r] for r in row[: rng.integers(3, 10)]) for row in ranks]
        texts[::17] = [ODD[(s + n) % len(ODD)] for n in range(len(texts[::17]))]
        raw.add_turns(f"s{s}", [NewTurn("user", t) for t in texts])
    return raw


def _walking(raw: RawContext) -> RawContext:
    """A second handle on the same memory as if its index were made before `N_terms`."""
    raw.db.execute("DELETE FROM lexical_terms")
    other = RawContext(open_database(Path(raw.db.path), AGENT_MIGRATIONS), clock=system_clock)
    assert not other.index.terms
    return other


def _fts5(raw: RawContext, query: str) -> dict[int, object]:
    """FTS5's own answer, from its walk (an index without `N_terms`): over every record, the
    keys' count never pays (the words' records are fewer than ten times every record's
    tokens)."""
    walker = _walking(raw)
    try:
        found = walker.index.term_freqs(parse_query(query, walker.index.analyser), walker.ids())
    finally:
        walker.db.close()
    return dict(found or {})


def test_counts_in_the_keys_are_fts5s_counts(raw: RawContext) -> None:
    counter = KeyCounter(raw.db.conn)
    ids = raw.ids()
    keys = raw.index._analysed_keys(ids)
    for query in QUERIES:
        match = raw.index._parsed(parse_query(query, raw.index.analyser))
        assert match is not None
        phrases = counter.phrases(match)
        assert phrases is not None, query
        want = _fts5(raw, query)
        assert want, query  # every query matches something here
        assert counter.freqs(keys, *phrases) == want, query


def test_a_few_candidates_of_frequent_words_get_fts5s_counts(raw: RawContext) -> None:
    """The index's own choice: 5 candidates of words in most records (the keys' count)."""
    for query in ["w0 w1", "w0 -w3", '"w0 w1" w2', "w0 w2 the"]:
        want = _fts5(raw, query)
        some = sorted(want)[:3] + [i for i in raw.ids() if i not in want][:2]
        got = raw.index.term_freqs(parse_query(query, raw.index.analyser), some)
        assert got == {i: want[i] for i in some if i in want}, query


def test_a_prefix_query_is_left_to_fts5(raw: RawContext) -> None:
    counter = KeyCounter(raw.db.conn)
    match = raw.index._parsed(parse_query("w1* w0", raw.index.analyser))
    assert match is not None and counter.phrases(match) is None
    want = _fts5(raw, "w1* w0")
    some = sorted(want)[:4]
    got = raw.index.term_freqs(parse_query("w1* w0", raw.index.analyser), some)
    assert got == {i: want[i] for i in some}


def test_the_record_count_follows_every_write(raw: RawContext) -> None:
    """BM25's record count comes from FTS5's averages record (a `count(*)` walked 1M rows after
    each write): it must equal the rows after inserts, forgets and rewrites, and inside a
    write transaction (where the record lags its pending rows)."""
    index = raw.index

    def rows() -> int:
        return int(raw.db.scalar(f"SELECT count(*) FROM {index.name}_fts"))

    assert index._records() == rows() == len(raw.ids())
    sid = raw.session_id("s0")
    assert sid is not None
    gone = [t.id for t in raw.session_turns(sid)[:7]]
    assert raw.forget_turns(gone, "a test") == len(gone)
    assert index._records() == rows() == len(raw.ids())
    raw.add_turns("late", [NewTurn("user", "w0 w1 late words")])
    assert index._records() == rows()
    with raw.db.transaction():
        raw.add_turns("inside", [NewTurn("user", f"w{n} pending") for n in range(5)])
        assert index._records() == rows()
    assert index._records() == rows() == len(raw.ids())


def test_counts_in_the_stored_terms_are_fts5s_counts(raw: RawContext) -> None:
    """`N_terms` kept beside `N_fts` from the first record on: every query's counts over every
    record, and over a few, are FTS5's, also after records are forgotten, added and re-cut."""
    assert raw.index.terms
    sid = raw.session_id("s1")
    assert sid is not None
    raw.forget_turns([t.id for t in raw.session_turns(sid)[:5]], "a test")
    raw.add_turns("late", [NewTurn("user", "w0 w0 w0 w1 the the café Caroline")])
    for query in [*QUERIES, '"w0 w0"', "w0 w0 w1"]:
        parsed = parse_query(query, raw.index.analyser)
        want = _fts5(raw, query)
        assert want, query
        assert raw.index.term_freqs(parsed, raw.ids()) == want, query
        some = sorted(want)[:3] + [i for i in raw.ids() if i not in want][:2]
        assert raw.index.term_freqs(parsed, some) == {i: want[i] for i in some if i in want}


def test_an_index_made_before_the_terms_counts_by_fts5_until_reanalysed(raw: RawContext) -> None:
    old = _walking(raw)
    try:
        query = "What did Caroline paint at the cafe?"
        want = old.index.term_freqs(parse_query(query, old.index.analyser), old.ids())
        old.index.reanalyse(old.lexical_keys(old.ids()).items())
        assert old.index.terms
        assert raw.db.scalar("SELECT count(*) FROM turn_text_terms") == len(raw.ids())
        again = RawContext(open_database(Path(raw.db.path), AGENT_MIGRATIONS), clock=system_clock)
        assert again.index.terms
        got = again.index.term_freqs(parse_query(query, again.index.analyser), again.ids())
        assert got == want and got
        again.db.close()
    finally:
        old.db.close()
