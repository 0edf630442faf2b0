"""Hybrid search over a real SQLite file with the real e5 embedder."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from tideline.embed import Embedder, NoneEmbedder, OpenAIEmbedder, embed_parts
from tideline.search import (
    MAX_QUERY_CHARS,
    TextIndex,
    bound_query,
    open_index,
    query_vector,
    rrf_fuse,
)
from tideline.search._hits import Hit
from tideline.search._sqlite_terms import _KNOWN_TERMS, WEIGHTLESS_FROM
from tideline.store import Database, Storage, open_database

#: The index tests on SQLite and on PostgreSQL (tests/conftest.py); the numpy copy is SQLite's.
pytestmark = pytest.mark.engines
SQLITE_ONLY = pytest.mark.parametrize("engine", ["sqlite"], indirect=True)

DOCS = {
    1: "To extract files from a tar archive, run tar xf archive.tar",
    2: "Our cat likes to sleep on the warm windowsill in the afternoon",
    3: "The quarterly budget meeting was moved to Thursday at 10:30",
    4: "Python virtual environments isolate package installations",
    5: "The whale-listen project records humpback songs off the coast",
}


@pytest.fixture
def index(storage: Storage, e5: Embedder) -> TextIndex:
    idx = open_index(storage, "docs")
    idx.upsert_many(list(DOCS.items()))
    idx.bind_vectors(e5.model_id, e5.dim)
    idx.set_vectors(zip(DOCS, e5.embed_documents(list(DOCS.values())), strict=True))
    return idx


def test_rrf_is_reciprocal_rank_with_k60() -> None:
    a = [Hit(1, lex_rank=1), Hit(2, lex_rank=2)]
    b = [Hit(2, vec_rank=1, vec_distance=0.1), Hit(3, vec_rank=2, vec_distance=0.2)]
    fused = rrf_fuse([a, b])
    assert [h.id for h in fused] == [2, 1, 3]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[0].lex_rank == 2 and fused[0].vec_distance == 0.1


def test_hybrid_finds_by_meaning_and_carries_score_parts(index: TextIndex, e5: Embedder) -> None:
    q = "how do I unpack an archive"
    hits = index.search(q, e5.embed_query(q), k=3)
    top = hits[0]
    assert top.id == 1
    assert top.vec_rank == 1 and top.vec_distance is not None and 0 <= top.vec_distance < 1
    assert 0 < top.score <= 1 and set(top.to_dict()) >= {"lex_rank", "vec_distance", "score"}


def test_modes(index: TextIndex, e5: Embedder) -> None:
    q = "10:30 Thursday"
    qv = e5.embed_query(q)
    lex = index.search(q, qv, k=5, mode="lex")
    assert lex[0].id == 3 and all(h.vec_rank is None for h in lex)
    vec = index.search("feline napping", e5.embed_query("feline napping"), k=5, mode="vec")
    assert vec[0].id == 2 and all(h.lex_rank is None for h in vec)


def test_weighted_mode_boosts_verbatim_keyword(index: TextIndex, e5: Embedder) -> None:
    q = "whale-listen"
    hits = index.search(q, e5.embed_query(q), k=5, fusion="weighted", boost=0.3)
    assert hits[0].id == 5 and hits[0].keyword_match
    assert hits[0].fused == pytest.approx(1 - hits[0].vec_distance + 0.3)
    assert not any(h.keyword_match for h in hits[1:])


def test_where_filter_applies_to_both_lists(index: TextIndex, e5: Embedder) -> None:
    q = "tar archive"
    hits = index.search(
        q,
        e5.embed_query(q),
        k=5,
        where="rowid IN (?, ?)",
        params=[2, 3],
    )
    assert {h.id for h in hits} <= {2, 3} and hits


def test_cross_lingual_queries_rank_the_english_sentence_first(
    index: TextIndex, e5: Embedder
) -> None:
    for q in ("как распаковать архив tar", "如何解压 tar 归档文件"):
        assert index.search(q, e5.embed_query(q), k=3, mode="vec")[0].id == 1


def test_changing_the_embedder_drops_old_vectors(index: TextIndex) -> None:
    assert len(index.vector_ids()) == 5
    assert index.bind_vectors("other-model", 8) is True
    assert index.vector_ids() == set() and index.dim == 8
    reopened = open_index(index.db, "docs")
    assert (reopened.model_id, reopened.dim) == ("other-model", 8)


def test_delete_removes_from_every_table(index: TextIndex, e5: Embedder) -> None:
    index.delete([1])
    assert 1 not in {h.id for h in index.search("tar", e5.embed_query("tar"), k=5)}
    assert 1 not in index.vector_ids()


def test_no_embedder_and_down_embedder_fall_back_to_lexical(index: TextIndex) -> None:
    assert query_vector(NoneEmbedder(), "tar") == (None, None)
    down = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", retries=0, timeout=0.5, dim=384)
    vec, warning = query_vector(down, "tar archive")
    assert vec is None and warning and "lexical only" in warning and "unreachable" in warning
    hits = index.search("tar archive", vec, k=3)
    assert hits[0].id == 1 and hits[0].vec_rank is None


def test_query_vector_dim_mismatch_is_ignored(index: TextIndex) -> None:
    assert index.vector(np.ones(7, dtype=np.float32), 3) == []


@SQLITE_ONLY
def test_numpy_and_sqlite_vec_knn_agree(index: TextIndex, e5: Embedder) -> None:
    qv = e5.embed_query("a sleepy cat")
    fast = index.vector(qv, 5)
    exact = index.vector(qv, 5, where="rowid > ?", params=[0])  # goes through sqlite-vec
    assert [h.id for h in fast] == [h.id for h in exact]
    assert [h.vec_distance for h in fast] == pytest.approx(
        [h.vec_distance for h in exact], abs=1e-4
    )


@SQLITE_ONLY
def test_vector_copy_reloads_after_another_connection_writes(
    index: TextIndex, e5: Embedder
) -> None:
    qv = e5.embed_query("a sleepy cat")
    assert index.vector(qv, 1)[0].id == 2
    other = TextIndex(open_database(index.db.path), "docs")
    other.delete([2])
    assert 2 not in {h.id for h in index.vector(qv, 5)}


@SQLITE_ONLY
def test_a_word_in_most_records_is_left_out_and_counted_again_after_writes(
    storage: Storage,
) -> None:
    # the record counts behind it are kept between queries: every write must renew them
    idx = open_index(storage, "notes")
    filler = [(i, f"sun {i}") for i in range(10, 10 + WEIGHTLESS_FROM)]
    idx.upsert_many([(1, "tide pool"), (2, "moon phase"), *filler])

    def found() -> set[int]:
        return {h.id for h in idx.lexical("tide moon", 10, trigram="fallback")}

    assert found() == {1, 2}  # "tide" is in 1 record
    idx.upsert_many([(i, f"tide {i}") for i in range(10, 10 + WEIGHTLESS_FROM)])
    assert found() == {2}  # in nearly all of them: left out
    assert isinstance(storage, Database) and storage.path is not None
    fresh = TextIndex(open_database(storage.path), "notes")  # another connection
    fresh.upsert_many(filler)
    assert found() == {1, 2}


def test_a_small_index_keeps_a_word_found_in_most_of_its_records(storage: Storage) -> None:
    # in a handful of records "over half" is one or two: the word may be the very match
    idx = open_index(storage, "notes")
    idx.upsert_many([(1, "my dog Pickle"), (2, "Pickle chased the ball"), (3, "rain")])
    assert {h.id for h in idx.lexical("Pickle ball", 10)} >= {1, 2}


def test_binding_the_same_model_twice_keeps_vectors(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    first = TextIndex(open_database(path), "docs")
    second = TextIndex(open_database(path), "docs")  # created before the first one binds
    assert first.bind_vectors("m", 3) is False
    first.set_vectors([(1, np.array([1, 0, 0], dtype=np.float32))])
    assert second.bind_vectors("m", 3) is False  # re-read inside its transaction: no drop
    assert second.vector_ids() == {1}


def test_rrf_weights_let_a_weaker_list_count_less() -> None:
    lex = [Hit(1, lex_rank=1), Hit(2, lex_rank=2)]
    vec = [Hit(2, vec_rank=1), Hit(3, vec_rank=2)]
    equal = rrf_fuse([lex, vec], k=10)
    assert [h.id for h in equal] == [2, 1, 3]
    halved = rrf_fuse([lex, vec], k=10, weights=[1.0, 0.5])
    assert halved[0].id == 2 and halved[0].score == pytest.approx(1 / 12 + 0.5 / 11)
    assert [h.id for h in halved] == [2, 1, 3] and halved[2].score == pytest.approx(0.5 / 12)


def test_a_long_record_gets_a_vector_per_part_and_is_found_once(
    index: TextIndex, e5: Embedder
) -> None:
    filler = " ".join(["Minutes of the committee on harbour maintenance and dredging."] * 60)
    tail = "Finally, the seagull colony nests on the lighthouse roof every spring."
    long_text = f"{filler} {tail}"
    index.upsert_many([(9, long_text)])
    index.set_vectors(zip([9], embed_parts(e5, [long_text]), strict=True))
    assert index.db.scalar("SELECT count(*) FROM docs_vecpart WHERE record = 9") >= 1
    q = e5.embed_query("where do the seagulls nest")
    for where in (None, "rowid IN (1, 2, 9)"):
        hits = index.vector(q, 10, where)
        assert [h.id for h in hits].count(9) == 1 and hits[0].id == 9, where
    assert index.distances(q, [9])[9] == pytest.approx(hits[0].vec_distance, abs=1e-4)
    assert [h.id for h in index.search("seagull nests", q, k=10)].count(9) == 1
    assert index.vectors_of([9])[9].shape[0] >= 2
    index.delete([9])
    assert index.db.scalar("SELECT count(*) FROM docs_vecpart") == 0
    assert 9 not in {h.id for h in index.vector(q, 10)}


def test_a_huge_query_is_bounded_on_the_lexical_side(index: TextIndex) -> None:
    for query in ("x" * 1_000_000, "tar" * 400_000, "記" * 1_000_000, "tar " * 300_000):
        started = time.perf_counter()
        index.search(query, None, k=5, mode="lex")
        elapsed = time.perf_counter() - started
        assert elapsed < 1.0, f"{len(query):,}-character query took {elapsed:.2f}s"  # was 49 s
    cut, notice = bound_query("tar " * 1_000)
    assert len(cut) == MAX_QUERY_CHARS and notice and "2,000 of 4,000 characters" in notice
    assert bound_query("tar xf") == ("tar xf", None)
    assert index.search("tar " * 1_000, None, k=1, mode="lex")[0].id == 1


def test_term_counts_survive_the_cache_of_terms_filling_up(tmp_path: Path) -> None:
    """The cache of terms' record counts is cleared when it passes `_KNOWN_TERMS`; it was cleared
    after the terms already known were set aside, so their lookup raised KeyError (the library
    search fuzz of #21 met it after 11,443 queries, as a long-running server would)."""
    index = TextIndex(open_database(tmp_path / "terms.db"), "docs")
    index.upsert_many([(1, "harbour lanterns and the ferry")])
    many = [f"w{i}" for i in range(_KNOWN_TERMS + 1)]
    first = index.term_counts(["harbour", *many])
    assert first is not None and first.df["harbour"] == 1
    counts = index.term_counts(["harbour", "ferry"])  # one known, one new
    assert (
        counts is not None and counts.df["harbour"] == 1 and set(counts.df) == {"harbour", "ferry"}
    )


#: Statements like LoCoMo conv-26's observations (what Sleep writes about two friends).
PARITY_DOCS = (
    "Caroline painted a vivid sunset inspired by a beach visit.",
    "Melanie painted a lake sunrise last year which holds special meaning to her.",
    "Painting is a fun way for Melanie to express her feelings and relax after a long day.",
    "Caroline treasures a hand-painted bowl made by a friend for her 18th birthday.",
    "Melanie and her kids enjoy nature-inspired painting projects.",
    "Caroline is planning an LGBTQ art show with her paintings for next month.",
    "Caroline painted a piece inspired by a visit to an LGBTQ center.",
    "Melanie shared a photo of her horse painting that she recently did.",
    "Melanie loves painting landscapes and still life.",
    "Melanie has been into art for seven years, painting and pottery.",
    "Melanie uses pottery as a calming and satisfying creative outlet.",
    "Melanie took her kids camping in the mountains last weekend.",
    "Caroline attended an LGBTQ support group and found it powerful.",
    "Caroline is researching adoption agencies to build a family.",
    "Caroline wants to pursue a career in counseling and mental health.",
    "Melanie ran a charity race for mental health awareness.",
    "Melanie's family went camping at the beach and watched the sunset together.",
    "Caroline gave a talk at a school about her transgender journey.",
    "Melanie signed up for a pottery class and made a black and white bowl.",
    "Caroline's friends from the support group came to her birthday party.",
    "Melanie reads books to her kids before bed every night.",
    "Caroline moved from Sweden four years ago with her grandmother's necklace.",
    "The art show next month will show paintings by LGBTQ artists.",
    "Melanie's husband surprised her with tickets to a concert.",
)
#: Questions whose words are in them (stems, a phrase, a prefix, a name): the lexical
#: evidence must weigh the same on both engines.
PARITY_QUERIES = (
    "painting a sunset",
    "What did Caroline paint for the LGBTQ art show?",
    '"art show" next month',
    "pott* and camping with her kids",
)


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_one_score_means_the_same_on_sqlite_and_postgresql(
    storage: Storage, tmp_path: Path, e5: Embedder
) -> None:
    """The bug: PostgreSQL gave no term statistics, so its hits had no lexical evidence and the
    same memories scored 0.229 there against 0.866 on SQLite ("painting a sunset")."""
    from tideline.search import Policy, Scope, retrieve

    docs = list(PARITY_DOCS)
    vectors = e5.embed_documents(docs)
    sqlite = open_database(tmp_path / "parity.db")
    indexes = [open_index(db, "obs") for db in (sqlite, storage)]
    assert type(indexes[0]) is not type(indexes[1])
    for idx in indexes:
        idx.upsert_many(list(enumerate(docs, 1)))
        idx.bind_vectors(e5.model_id, e5.dim)
        idx.set_vectors(zip(range(1, len(docs) + 1), vectors, strict=True))
    policy = Policy(fusion="convex", alpha=0.5, kind="narrative")
    for query in PARITY_QUERIES:
        qvec = e5.embed_query(query)
        for mode in ("hybrid", "lex"):
            lite, pg = (retrieve(Scope(idx), query, qvec, 10, mode, policy).hits for idx in indexes)
            assert lite and [h.id for h in pg] == [h.id for h in lite], (query, mode)
            for a, b in zip(lite, pg, strict=True):
                assert b.score == pytest.approx(a.score, abs=0.01), (query, mode, a.id)
                assert b.lexical == pytest.approx(a.lexical, abs=0.01), (query, mode, a.id)
                if a.lex_source == "bm25":
                    assert b.lex_score == pytest.approx(a.lex_score, rel=0.02), (query, a.id)
            if mode == "hybrid" and query == PARITY_QUERIES[0]:
                assert pg[0].lexical and pg[0].score > 0.5, [(h.id, h.score) for h in pg]
    sqlite.close()
