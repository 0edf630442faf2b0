"""`retrieve`, the one retrieval path: ties, several scopes, dashes, degradation, explanations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

from tests.openai_stub import OpenAIStub
from tideline.embed import Embedder, OpenAIEmbedder
from tideline.search import (
    Hit,
    Key,
    Near,
    Policy,
    Scope,
    SearchResult,
    TextIndex,
    literal_dashes,
    open_index,
    pending_vector,
    retrieve,
    rrf_fuse,
)
from tideline.store import Storage

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

FERRY = "The ferry to the island leaves at 7:40 from pier 3"


def _index(db: Storage, docs: dict[int, str], e5: Embedder | None = None) -> TextIndex:
    idx = open_index(db, "docs")
    idx.upsert_many(list(docs.items()))
    if e5 is not None:
        idx.bind_vectors(e5.model_id, e5.dim)
        idx.set_vectors(zip(docs, e5.embed_documents(list(docs.values())), strict=True))
    return idx


def test_competition_ties_share_a_rank_and_a_score() -> None:
    lex = [Hit(1, lex_score=7.0), Hit(2, lex_score=7.0 + 1e-12), Hit(3, lex_score=5.0)]
    fused = rrf_fuse([lex], k=60, ties="competition")
    assert [h.score for h in fused] == pytest.approx([1 / 61, 1 / 61, 1 / 63])
    ordinal = rrf_fuse([lex], k=60)
    assert ordinal[1].score == pytest.approx(1 / 62)


def test_identical_texts_tie_and_recency_decides(
    new_storage: Callable[[], Storage], e5: Embedder
) -> None:
    idx = _index(new_storage(), {1: FERRY, 2: FERRY, 3: "Bus timetable for the coast"}, e5)
    query = "ferry to the island"
    policy = Policy(ties="competition")
    for mode in ("hybrid", "lex", "vec"):
        found = retrieve(idx, query, e5.embed_query(query), 2, mode, policy)
        first, second = found.top(2)
        assert round(first.score, 12) == round(second.score, 12), mode
        newer = found.top(2, recency={(0, 1): 1.0, (0, 2): 2.0})
        assert [h.id for h in newer] == [2, 1], mode


def test_several_scopes_merge_by_raw_score_and_keep_their_source(
    new_storage: Callable[[], Storage], e5: Embedder
) -> None:
    a = _index(new_storage(), {1: "sourdough bread recipe", 2: "bike repair notes"}, e5)
    b = _index(new_storage(), {1: "sourdough starter feeding schedule and bread"}, e5)
    query = "sourdough bread"
    found = retrieve([Scope(a), Scope(b)], query, e5.embed_query(query), 5)
    keys = {h.key for h in found.hits}
    assert {(0, 1), (1, 1)} <= keys  # the same id in two collections stays two hits
    assert found.mode == "hybrid" and all(h.fusion == "rrf" for h in found.hits)
    lex = retrieve([Scope(a), Scope(b)], query, None, 5, "lex").hits
    assert [h.lex_rank for h in lex] == list(range(1, len(lex) + 1))
    assert [h.lex_score for h in lex] == sorted((h.lex_score for h in lex), reverse=True)
    only_b = retrieve([Scope(a, "rowid = ?", (2,)), Scope(b)], query, None, 5, "lex").hits
    assert {h.key for h in only_b} == {(1, 1)}


def test_literal_dashes_find_options_instead_of_excluding(
    new_storage: Callable[[], Storage],
) -> None:
    idx = _index(new_storage(), {1: "run tar -t to list an archive", 2: "tar it up"})
    assert literal_dashes("make --clean -t") == "make clean t"
    plain = Policy(trigram="fallback")
    excluded = retrieve(idx, "tar -t", None, 5, "lex", plain).hits
    assert [h.id for h in excluded] == [2]
    literal = replace(plain, literal_dashes=True)
    assert retrieve(idx, "tar -t", None, 5, "lex", literal).hits[0].id == 1


def test_trigram_fallback_only_when_bm25_finds_nothing(new_storage: Callable[[], Storage]) -> None:
    idx = _index(new_storage(), {1: "the walrus sleeps", 2: "walrusland everywhere"})
    top_up = retrieve(idx, "walrus", None, 5, "lex").hits
    assert [(h.id, h.lex_source) for h in top_up] == [(1, "bm25"), (2, "trigram")]
    fallback = retrieve(idx, "walrus", None, 5, "lex", Policy(trigram="fallback")).hits
    assert [(h.id, h.lex_source) for h in fallback] == [(1, "bm25")]
    substring = retrieve(idx, "alrus", None, 5, "lex", Policy(trigram="fallback")).hits
    assert {h.lex_source for h in substring} == {"trigram"}


@pytest.mark.parametrize(
    ("mode", "warning", "expected"),
    [
        ("vec", None, ["no embedder configured: vector search is off, showing lexical results"]),
        ("hybrid", None, []),
        (
            "hybrid",
            "vector search skipped: the endpoint is down",
            ["vector search skipped: the endpoint is down"],
        ),
        ("lex", None, []),
    ],
)
def test_no_query_vector_searches_lexically_and_says_so_once(
    new_storage: Callable[[], Storage], mode: str, warning: str | None, expected: list[str]
) -> None:
    idx = _index(new_storage(), {1: "the tide turned at noon"})
    found = retrieve(idx, "tide", None, 3, mode, warning=warning)  # type: ignore[arg-type]
    assert isinstance(found, SearchResult)
    assert found.mode == "lex" and found.warnings == expected
    assert [h.id for h in found.hits] == [1] and found.hits[0].fused == 1.0  # BM25 / the best
    assert 0.0 < found.hits[0].score < 1.0  # the relevance, from the lexical calibration


def test_a_pending_vector_ranks_as_the_vector_itself(
    new_storage: Callable[[], Storage], e5: Embedder
) -> None:
    # retrieve searches the lexical lists while the query thread embeds: same hits, same scores
    docs = {1: FERRY, 2: "Bus timetable for the coast", 3: "island ferry tickets sold out"}
    idx = _index(new_storage(), docs, e5)
    query = "ferry to the island"
    for mode in ("hybrid", "vec", "lex"):
        now = retrieve(idx, query, e5.embed_query(query), 3, mode, Policy(fusion="convex"))
        later = retrieve(idx, query, pending_vector(e5, query), 3, mode, Policy(fusion="convex"))
        assert [(h.id, h.score) for h in later.hits] == [(h.id, h.score) for h in now.hits]
        assert later.mode == now.mode == mode and later.warnings == []
    none = retrieve(idx, query, pending_vector(None, query), 3, "hybrid")
    assert none.mode == "lex" and none.warnings == []


def test_a_pending_vector_from_a_down_embedder_searches_lexically_and_says_why(
    new_storage: Callable[[], Storage],
) -> None:
    idx = _index(new_storage(), {1: "the tide turned at noon"})
    with OpenAIStub() as stub:
        down = OpenAIEmbedder(stub.url, "m", dim=16, retries=0)
        for mode in ("hybrid", "vec"):
            stub.fail_next = [500]
            found = retrieve(idx, "tide", pending_vector(down, "tide"), 3, mode)  # type: ignore[arg-type]
            assert found.mode == "lex" and [h.id for h in found.hits] == [1]
            assert len(found.warnings) == 1 and "results are lexical only" in found.warnings[0]


def test_weighted_fusion_boosts_verbatim_keywords(
    new_storage: Callable[[], Storage], e5: Embedder
) -> None:
    docs = {1: "whale-listen records humpback songs", 2: "listening to whales singing at sea"}
    idx = _index(new_storage(), docs, e5)
    query = "whale-listen"
    top = retrieve(idx, query, e5.embed_query(query), 2, policy=Policy(fusion="weighted")).top(1)[0]
    assert top.id == 1 and top.keyword_match and top.fusion == "weighted"
    assert top.fused == pytest.approx(1 - (top.vec_distance or 0.0) + 0.3)


def test_explain_names_every_part() -> None:
    hit = Hit(
        1, 0.8249, lex_rank=1, lex_score=7.123, lex_source="bm25", vec_rank=3, vec_distance=0.2141
    )
    hit.fusion, hit.keyword_match, hit.lifts = "rrf", True, {"dates": 0.0104, "memory keys": 0.0}
    assert hit.explain() == (
        "relevance 0.82 · bm25 #1 7.12 · cosine 0.786 #3 · every word verbatim · dates +0.010"
    )
    assert Hit(2, 0.35, lex_rank=2, lex_score=3.5, lex_source="trigram").explain() == (
        "relevance 0.35 · trigram #2 3.50"
    )
    assert hit.to_dict()["explain"] == hit.explain()


def test_retrieve_ranks_its_own_copies_never_the_index_hits(
    new_storage: Callable[[], Storage], monkeypatch: pytest.MonkeyPatch
) -> None:
    # retrieve copies each candidate once and then ranks and scores its copy in place: an index
    # that hands out the same Hit objects every time (a cache) must see them unchanged.
    idx = _index(new_storage(), {1: "ferry pier", 2: "ferry island", 3: "bus"})
    lex = [Hit(2, lex_score=3.0, lex_rank=1), Hit(1, lex_score=2.0, lex_rank=2)]
    vec = [Hit(1, vec_distance=0.1, vec_rank=1), Hit(2, vec_distance=0.3, vec_rank=2)]
    before = [replace(h) for h in lex + vec]
    monkeypatch.setattr(idx, "lexical", lambda *a, **k: lex)
    monkeypatch.setattr(idx, "vector", lambda *a, **k: vec)
    qvec = np.ones(4, dtype=np.float32)
    for _ in range(2):
        found = retrieve(idx, "ferry", qvec, 2, "lex", Policy())
        assert [(h.id, h.lex_rank) for h in found.top(2)] == [(2, 1), (1, 2)]
        found = retrieve(idx, "ferry", qvec, 2, "vec", Policy())
        assert [(h.id, h.vec_rank) for h in found.top(2)] == [(1, 1), (2, 2)]
        assert [h.fused for h in found.top(2)] == pytest.approx([0.9, 0.7])
        found = retrieve(idx, "ferry", qvec, 2, "hybrid", Policy())
        assert {h.id for h in found.top(2)} == {1, 2}
        two = retrieve([Scope(idx), Scope(idx)], "ferry", qvec, 4, "lex", Policy())
        assert sorted(h.key for h in two.top(4)) == [(0, 1), (0, 2), (1, 1), (1, 2)]
        assert [h.lex_rank for h in two.top(4)] == [1, 2, 3, 4]
    assert lex + vec == before


def test_levers_are_stages_of_retrieve(new_storage: Callable[[], Storage], e5: Embedder) -> None:
    # keys lift the records they point at, the session list lifts a session's turns, and
    # truncation stops where the relevance falls: each visible in the hits' `lifts`
    docs = {
        1: "We drove to the coast in the old van",
        2: "The van broke down near the lighthouse",
        3: "A mechanic towed the van to the village",
        4: "I baked bread for the neighbours",
        5: "The coast road was closed by the storm",
    }
    idx = _index(new_storage(), docs, e5)
    query = "what happened to the van"
    qvec = e5.embed_query(query)
    sessions = {1: "trip", 2: "trip", 3: "trip", 4: "home", 5: "news"}

    def groups(ids: object) -> dict[int, str]:
        return {i: sessions[i] for i in ids}  # type: ignore[attr-defined]

    plain = retrieve(idx, query, qvec, 5, "hybrid", Policy(fusion="convex"), groups=groups)
    lifted = retrieve(
        idx, query, qvec, 5, "hybrid", Policy(fusion="convex", session_weight=1.0), groups=groups
    )
    assert all("sessions" not in h.lifts for h in plain.hits)
    trip = [h for h in lifted.hits if sessions[h.id] == "trip"]
    assert trip and all(h.lifts.get("sessions", 0) > 0 for h in trip)
    assert all(sessions[h.id] == "trip" for h in lifted.hits[:3])
    key = Key("dates", Scope(idx, "rowid = ?", (4,)), 1.0)
    keyed = retrieve(idx, query, qvec, 5, "hybrid", Policy(fusion="convex"), keys=[key])
    bread = next(h for h in keyed.hits if h.id == 4)
    assert bread.lifts["dates"] > 0 and "dates +" in bread.explain()
    cut = retrieve(idx, query, qvec, 5, "hybrid", Policy(fusion="convex", truncate=0.9))
    assert cut.hits and all(h.score >= 0.9 * cut.hits[0].score for h in cut.hits)
    assert len(cut.hits) < len(plain.hits)


def test_the_neighbours_lever_reads_the_stored_vectors_around_a_candidate(
    new_storage: Callable[[], Storage],
) -> None:
    # two records say "red kite"; the second is nearer the query by itself, the first sits
    # amid a passage about it (its neighbours' stored vectors are near the query): the lever
    # puts the first first, with no embedding at query time
    docs = {
        1: "we flew the red kite",
        2: "the red kite, yes",
        10: "it climbed over the hill",
        11: "the wind took it higher",
        20: "lunch was late",
        21: "the bus was full",
    }
    idx = open_index(new_storage(), "docs")
    idx.upsert_many(list(docs.items()))
    idx.bind_vectors("hand-made", 4)

    def unit(*v: float) -> np.ndarray:
        a = np.asarray(v, dtype=np.float32)
        return a / np.linalg.norm(a)

    vectors = {1: unit(0.9, 0.4, 0, 0), 2: unit(1, 0.1, 0, 0), 10: unit(0.8, 0, 0.6, 0)}
    vectors |= {11: unit(0.8, 0, 0, 0.6), 20: unit(0, 0, 1, 0), 21: unit(0, 0, 0, 1)}
    idx.set_vectors(vectors.items())
    around = {1: [10, 11], 2: [20, 21], 10: [1], 11: [1], 20: [2], 21: [2]}

    def neighbours(ids: object) -> dict[int, list[int]]:
        return {i: around[i] for i in ids if i in around}  # type: ignore[attr-defined]

    qvec = unit(1, 0, 0, 0)
    policy = Policy(fusion="convex")
    plain = retrieve(idx, "red kite", qvec, 4, "hybrid", policy)
    assert [h.id for h in plain.hits[:2]] == [2, 1]
    near = Near("neighbours", 2.0, neighbours)
    lifted = retrieve(idx, "red kite", qvec, 4, "hybrid", policy, keys=[near])
    first = lifted.hits[0]
    assert first.id == 1
    assert first.lifts["neighbours"] > 0 and "neighbours +" in first.explain()
    assert "neighbours" not in next(h for h in lifted.hits if h.id == 2).lifts  # the least near
