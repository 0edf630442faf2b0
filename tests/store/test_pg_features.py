"""PostgreSQL's vector search keeps its recall (issue 25): the HNSW walk is a setting (or chosen
per query), a narrow filter is answered exactly, and what the server's extensions offer
(pgvector's iterative scans from 0.8, pg_trgm) is read from the server itself."""

from __future__ import annotations

import numpy as np
import pytest

from tideline.clock import system_clock
from tideline.memory import AGENT_MIGRATIONS, NewTurn, RawContext
from tideline.search import PgTextIndex, VectorOptions, create_index, open_index
from tideline.search._pg_index import FREQUENT_SAMPLE
from tideline.search._pg_terms import like_literal
from tideline.search._pg_vectors import PgFeatures
from tideline.store import Storage

DIM = 24


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture
def pg(new_storage) -> Storage:  # type: ignore[no-untyped-def]
    db = new_storage()
    if db.dialect != "postgresql":
        pytest.skip("PostgreSQL only")
    AGENT_MIGRATIONS.apply(db)
    return db


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_the_server_says_what_it_offers(pg: Storage) -> None:
    features = PgFeatures.read(pg)
    version = str(pg.scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
    assert ".".join(map(str, features.pgvector)) == version
    assert features.iterative_scan == (features.pgvector >= (0, 8))
    available = bool(pg.scalar("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'"))
    assert features.trigram == available  # the bundled server: neither (its fallbacks run)


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_the_walk_width_is_a_setting_and_wide_walks_are_exact(pg: Storage) -> None:
    raw = RawContext(pg, clock=system_clock)
    done, _, _ = raw.add_turns("s", [NewTurn("user", f"turn {i}") for i in range(3000)])
    ids = [i for i, _ in done]
    rng = np.random.default_rng(25)
    vectors = _unit(rng.standard_normal((len(ids), 64)))  # random: the graph's worst case
    raw.index.bind_vectors("random", 64)
    raw.index.set_vectors(zip(ids, vectors, strict=True))
    pg.execute("ANALYZE")
    assert isinstance(raw.index, PgTextIndex)
    queries = _unit(rng.standard_normal((20, 64)))
    truth = [[ids[j] for j in np.argsort(-(vectors @ q))[:10]] for q in queries]

    def recall(ef: int) -> float:
        raw.index.configure(VectorOptions(ef_search=ef))
        got = [[h.id for h in raw.index.vector(q, 10)] for q in queries]
        return float(np.mean([len(set(g) & set(t)) / 10 for g, t in zip(got, truth, strict=True)]))

    assert recall(10) < 0.9  # pgvector's narrowest walks miss neighbours here
    assert recall(1000) == 1.0


def test_like_patterns_take_substrings_literally() -> None:
    assert like_literal("50%_off\\") == "50\\%\\_off\\\\"


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_lexical_ranks_the_rare_terms_matches_not_every_match_of_a_frequent_word(
    pg: Storage,
) -> None:
    create_index(pg, "notes")
    index = open_index(pg, "notes")
    assert isinstance(index, PgTextIndex)
    texts = ["harbour harbour harbour harbour"]  # the oldest: the best ts_rank for "harbour"
    texts += [
        f"the harbour at dusk, number {i}" if i % 5 < 2 else f"a quiet street, number {i}"
        for i in range(4000)
    ]
    texts += [f"a lantern by the door, number {i}" for i in range(12)]
    index.upsert_many(list(enumerate(texts, 1)))
    planted, lanterns = 1, set(range(len(texts) - 11, len(texts) + 1))
    # no statistics yet: every match is ranked, and the planted record is the best of them
    assert index.lexical("harbour", 5)[0].id == planted
    pg.execute("ANALYZE")
    # "harbour" is in 40% of the records: only "lantern"'s matches are ranked
    hits = index.lexical("harbour lantern", 10)
    assert len(hits) == 10 and {h.id for h in hits} <= lanterns
    assert [h.lex_rank for h in hits] == list(range(1, 11))
    # fewer than k: the rest come from the newest matches of the whole query, never the oldest
    hits = index.lexical("harbour lantern", 30)
    got = [h.id for h in hits]
    assert len(got) == 30 and lanterns <= set(got) and planted not in got
    harbours = [n for n, t in enumerate(texts, 1) if "harbour" in t]
    assert set(got) - lanterns <= set(harbours[-FREQUENT_SAMPLE:])
    scores = [h.lex_score for h in hits]
    assert scores == sorted(scores, reverse=True)  # one order, by the score shown
    # a query of rare terms only is ranked whole, as before
    assert {h.id for h in index.lexical("lantern door", 50)} == lanterns


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_vectors_read_back_bit_for_bit_with_their_parts(pg: Storage) -> None:
    """Vectors are read as pgvector's binary form (`vector_send`), not parsed from text: every
    float32 comes back exactly as written, a long text's parts in order, records without a
    vector left out — what `migrate`'s check hashes on both ends."""
    create_index(pg, "notes")
    index = open_index(pg, "notes")
    index.bind_vectors("bits", DIM)
    rng = np.random.default_rng(11)
    written = {
        1: _unit(rng.standard_normal(DIM)),
        2: _unit(rng.standard_normal((3, DIM))),  # a text cut in three parts
        3: np.array([1e-38, -0.0, 3.4e38, 1.0 / 3.0] * (DIM // 4), dtype=np.float32),
    }
    index.set_vectors(written.items())
    got = index.vectors_of([3, 1, 2, 4])
    assert sorted(got) == [1, 2, 3]
    for i, v in written.items():
        want = np.asarray(v, dtype=np.float32).reshape(-1, DIM)
        assert got[i].dtype == np.float32 and got[i].tobytes() == want.tobytes(), i
    ids, matrix = index.vectors()
    assert ids.tolist() == [1, 2, 3] and matrix.dtype == np.float32
    assert matrix.tobytes() == np.stack([written[1], written[2][0], written[3]]).tobytes()
    ids, matrix = index.vectors([2])
    assert ids.tolist() == [2] and matrix.tobytes() == written[2][0].tobytes()


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_term_shares_follow_each_analyze(pg: Storage) -> None:
    """The lexeme statistics are kept between searches, and read again after every ANALYZE
    (by the next search: its lexical list asks for the analyze counts once): a word's share
    after more records came is the new one, not the one kept."""
    create_index(pg, "notes")
    index = open_index(pg, "notes")
    assert isinstance(index, PgTextIndex)
    texts = [
        f"the harbour at dusk {i}" if i % 5 < 2 else f"a quiet street {i}" for i in range(2000)
    ]
    index.upsert_many(list(enumerate(texts, 1)))
    assert index._shares(["harbour"]) == {}  # no statistics yet
    pg.execute("ANALYZE")
    index.lexical("harbour", 1)  # the next search
    first = index._shares(["harbour"])["harbour"]
    assert first == pytest.approx(0.4, abs=0.05)
    assert index._shares(["harbour", "street"])["harbour"] == first  # kept
    more = [f"a lantern by the door {i}" for i in range(6000)]
    index.upsert_many(list(enumerate(more, len(texts) + 1)))
    assert index._shares(["harbour"])["harbour"] == first  # no ANALYZE since
    pg.execute("ANALYZE")
    index.lexical("harbour", 1)  # the next search
    assert index._shares(["harbour"])["harbour"] == pytest.approx(0.1, abs=0.03)


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
@pytest.mark.parametrize("estimated", [False, True], ids=["counted", "estimated"])
def test_a_search_of_one_index_takes_a_few_statements(
    pg: Storage, monkeypatch: pytest.MonkeyPatch, estimated: bool
) -> None:
    """Issue 34: a hybrid search of one index was 12–13 statements (31 for the product's turn
    search), each waiting on the server. Now: the term statistics once a search (kept per
    ANALYZE), one ranking statement per list whatever its stages, one vector statement (the
    walk's width set inside it, the long texts' parts with it), one for the term frequencies,
    one for the distances; inside a time window, one exact statement (it was a count, then the
    distances). `estimated`: the records as PostgreSQL estimates them, frequent words by its
    statistics (what a million turns take)."""
    from tideline.search import Policy, Scope, _pg_terms, retrieve
    from tideline.store._postgres import PgDatabase

    assert isinstance(pg, PgDatabase)
    if estimated:
        monkeypatch.setattr(_pg_terms, "_ESTIMATE_FROM", 100)
    create_index(pg, "notes")
    index = open_index(pg, "notes")
    assert isinstance(index, PgTextIndex)
    texts = [
        f"the harbour at dusk, number {i}" if i % 5 < 2 else f"a street {i}" for i in range(3000)
    ]
    texts += [f"a lantern by the door, number {i}" for i in range(12)]
    ids = list(range(1, len(texts) + 1))
    index.upsert_many(list(zip(ids, texts, strict=True)))
    rng = np.random.default_rng(34)
    vectors = _unit(rng.standard_normal((len(ids), DIM)))
    index.bind_vectors("bits", DIM)
    index.set_vectors(zip(ids, vectors, strict=True))
    index.set_vectors([(ids[-1], _unit(rng.standard_normal((2, DIM))))])  # one text in parts
    pg.execute("ANALYZE")
    lanterns = set(ids[-12:])
    by_id = dict(zip(ids, texts, strict=True))

    def texts_of(wanted: object) -> dict[int, str]:
        return {i: by_id[i] for i in wanted}  # type: ignore[attr-defined]

    q = _unit(rng.standard_normal(DIM))
    index.server()  # what the server offers: read once a process
    # the first search after an ANALYZE reads its statistics (lexemes, mean length): two more;
    # a list shorter than the depth asked is topped up by substrings: one more
    for query, statements in (("harbour lantern", 7), ("harbour lantern", 5), ("lantern door", 6)):
        before = pg.statements
        found = retrieve(Scope(index), query, q, 10, "hybrid", Policy(), texts=texts_of)
        assert pg.statements - before <= statements, query
        assert lanterns & {h.id for h in found.hits}, query
    assert index.term_counts(["lantern"]).df["lantern"] == 12  # type: ignore[union-attr]
    # a time window: exact, in one statement, with the parts' nearest
    window = ("rowid BETWEEN ? AND ?", (2000, len(ids)))
    before = pg.statements
    hits = index.vector(q, 10, window[0], window[1])
    assert pg.statements - before == 1
    inside = np.arange(1999, len(ids))
    sims = vectors[inside] @ q
    truth = {int(ids[inside[j]]) for j in np.argsort(-sims)[:10]}
    parts = index.vectors_of([ids[-1]])[ids[-1]]
    assert parts.shape == (2, DIM)
    got = {h.id for h in hits}
    assert len(got) == 10 and len(got & truth) >= 9  # the long text may come in by a part
    assert [h.vec_distance for h in hits] == sorted(h.vec_distance for h in hits)
    # no filter: one statement, the HNSW walk
    before = pg.statements
    assert len(index.vector(q, 10)) == 10
    assert pg.statements - before == 1
