"""Search: by meaning, by exact words, fused, fresh, and confined to the library."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.library.corpus import build
from tests.library.notes import make_collection
from tideline.app import library_from, library_policy
from tideline.config import DEFAULTS
from tideline.embed import Embedder
from tideline.errors import InvalidInput
from tideline.library import MAX_K, Library, PathOutsideLibrary


@pytest.fixture
def lib(lib_root: Path, e5: Embedder) -> Library:
    build(lib_root)
    library = library_from(DEFAULTS, lib_root, e5)
    library.index()
    yield library
    library.close()


def _top(result, n: int = 5) -> list[str]:
    return [h.heading for h in result.hits[:n]]


@pytest.mark.parametrize("mode", ["vec", "hybrid"])
@pytest.mark.parametrize(
    "question",
    [
        "how do I bring the DB back after we lost the data?",
        "как восстановить базу данных из резервной копии",  # Russian, no shared words
    ],
)
def test_a_semantic_question_finds_its_section(lib: Library, question: str, mode: str) -> None:
    result = lib.search(question, "*", k=5, mode=mode)
    assert "Infrastructure runbook › Restoring the Postgres database" in _top(result)
    hit = next(h for h in result.hits if h.heading.endswith("Postgres database"))
    assert hit.location == "infra/runbook.md:8"
    assert hit.vec_distance is not None and "pg_restore" in hit.text


@pytest.mark.parametrize("query", ["4711", "PBR", "pg_restore --clean"])
def test_numbers_and_abbreviations_are_found_by_bm25(lib: Library, query: str) -> None:
    result = lib.search(query, "infra", k=3, mode="lex")
    assert result.hits[0].heading.split(" › ")[-1] in (
        "Policy based routing",
        "Restoring the Postgres database",
    )
    assert result.hits[0].lex_rank == 1 and result.hits[0].vec_rank is None
    assert query.split()[0].strip("-") in result.hits[0].text


def test_hybrid_keeps_the_score_parts(lib: Library) -> None:
    result = lib.search("firewall rule 4711", "infra", k=3)
    top = result.hits[0]
    assert top.heading.endswith("Policy based routing")
    assert top.lex_rank == 1 and top.vec_rank is not None
    k = library_policy(
        DEFAULTS
    ).rrf_k  # the query is covered: the lexical list keeps its full weight
    assert top.fused == pytest.approx(1 / (k + 1) + 1 / (k + top.vec_rank), abs=1e-6)
    assert 0.0 < top.score <= 1.0 and top.explain().startswith(f"relevance {top.score:.2f}")
    assert all(h.score < top.score for h in result.hits[1:])


def test_an_edit_right_before_the_search_is_found_in_the_same_call(lib: Library) -> None:
    note = Path(lib.root) / "life/home/home.md"
    with note.open("a", encoding="utf-8") as fh:
        fh.write("\n## Bicycle\n\nThe bike lock code is 90210.\n")
    result = lib.search("bike lock code 90210", "life/home", k=3)
    assert result.caught_up == 1
    assert result.hits[0].location == "life/home/home.md:11"
    by_meaning = lib.search("combination for the bicycle padlock", "life/home", k=1, mode="vec")
    assert by_meaning.hits[0].heading == "Home › Bicycle"  # the new vector is seen at once
    new_file = Path(lib.root) / "life/home/fresh.md"
    new_file.write_text("# Fresh\n\nA zeppelin schedule.\n", encoding="utf-8")
    assert lib.search("zeppelin", "life/home/fresh.md").hits[0].path == "life/home/fresh.md"
    new_file.unlink()
    assert not lib.search("zeppelin", "life/home", mode="lex").hits


def test_path_limits_the_search_to_a_file_or_folder(lib: Library) -> None:
    result = lib.search("novel Moscow", "life/home/books.md", k=5)
    assert {h.path for h in result.hits} == {"life/home/books.md"}
    result = lib.search("database", "life", k=5)
    assert result.collections == ["life/home"] and all(
        h.path.startswith("life/") for h in result.hits
    )
    assert not result.expensive


def test_star_searches_every_collection(lib: Library) -> None:
    result = lib.search("bread", "*", k=3)
    assert result.expensive and sorted(result.collections) == ["infra", "life/home"]
    assert not [w for w in result.warnings if "expensive" in w]  # nothing to act on


def test_fresher_note_wins_a_tie(lib_root: Path, e5: Embedder) -> None:
    same = "# Ferry\n\nThe ferry to the island leaves at 7:40 from pier 3.\n"
    make_collection(lib_root, "trips", "Travel notes", {"a1.md": same, "b1.md": same})
    os.utime(lib_root / "trips/a1.md", (2_000_000_000, 2_000_000_000))
    os.utime(lib_root / "trips/b1.md", (1_000_000_000, 1_000_000_000))
    with library_from(DEFAULTS, lib_root, e5) as library:
        library.index()
        for mode in ("hybrid", "lex", "vec"):
            hits = library.search("ferry to the island", "trips", k=2, mode=mode).hits
            assert hits[0].score == hits[1].score
            assert [h.path for h in hits] == ["trips/a1.md", "trips/b1.md"]
        os.utime(lib_root / "trips/b1.md", (2_100_000_000, 2_100_000_000))
        hits = library.search("ferry to the island", "trips", k=2).hits
        assert hits[0].path == "trips/b1.md"


@pytest.mark.parametrize("bad", ["../outside", "/etc", "infra/../../x", "infra/link"])
def test_paths_outside_the_library_are_refused(lib: Library, tmp_path: Path, bad: str) -> None:
    (tmp_path / "outside").mkdir(exist_ok=True)
    link = Path(lib.root) / "infra/link"
    if not link.exists():
        os.symlink(tmp_path / "outside", link)
    with pytest.raises(PathOutsideLibrary, match="outside the library root"):
        lib.search("anything", bad)


def test_lexical_only_without_an_embedder(lib_root: Path) -> None:
    build(lib_root)
    with library_from(DEFAULTS, lib_root, None) as library:
        library.index()
        assert library.search("4711", "infra").hits[0].heading.endswith("Policy based routing")
        vec = library.search("4711", "infra", mode="vec")  # lexical, and it says so
        assert vec.hits[0].heading.endswith("Policy based routing")
        assert vec.warnings == [
            "no embedder configured: vector search is off, showing lexical results"
        ]


@pytest.mark.parametrize("k", [0, 101, 500, True, "8"])
def test_k_out_of_bounds_is_refused(lib_root: Path, k: object) -> None:
    build(lib_root)
    with library_from(DEFAULTS, lib_root, None) as library:
        with pytest.raises(InvalidInput, match=f"ask for 1–{MAX_K} results"):
            library.search("4711", "infra", k=k)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match=f"ask for 1–{MAX_K} results"):
            library.route("4711", k=k)  # type: ignore[arg-type]
        assert len(library.search("the", "*", k=MAX_K, mode="lex").hits) <= MAX_K
