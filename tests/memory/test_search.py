from __future__ import annotations

from dataclasses import replace

import pytest

from tideline.app import Tideline, narrative_policy, turn_policy
from tideline.clock import system_clock
from tideline.config import DEFAULTS, Settings
from tideline.embed import OpenAIEmbedder
from tideline.errors import InvalidInput
from tideline.memory import Memory

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines


@pytest.fixture
def filled(memory: Memory) -> Memory:
    t = memory.sync_turn(
        "s", "user", "We should name the new project whale-listen", timestamp="2026-05-01T10:00:00Z"
    )
    memory.write(
        gesture="The user named the project whale-listen",
        tags=["project"],
        importance=4,
        source_links=[t.id],
        created_at="2026-05-01T10:05:00Z",
    )
    memory.write(
        gesture="We listened to humpback whale songs from the ocean",
        tags=["music", "ocean"],
        created_at="2026-06-01T00:00:00Z",
    )
    memory.write(
        gesture="Dreamt of a library under the sea",
        kind="dream",
        tags=["ocean"],
        created_at="2026-07-01T00:00:00Z",
    )
    memory.write(
        gesture="Quarterly budget review went badly",
        importance=5,
        emotional=5,
        unresolved=5,
        tags=["work"],
        created_at="2026-08-01T00:00:00Z",
    )
    return memory


def test_verbatim_keyword_gets_the_boost(filled: Memory) -> None:
    hits = filled.search("whale-listen", min_score=0, include_turns=False).hits
    assert hits[0].text == "The user named the project whale-listen"
    assert hits[0].keyword_match and not hits[1].keyword_match
    assert hits[0].fused == pytest.approx(1 - hits[0].vec_distance + 0.3, abs=1e-5)


def test_boost_is_configurable(app: Tideline, filled: Memory) -> None:
    no_boost = Memory(
        filled.db,
        app.embedder,
        narrative_policy=replace(narrative_policy(DEFAULTS), boost=0.0),
        turn_policy=turn_policy(DEFAULTS),
        clock=system_clock,
    )
    top = no_boost.search("whale-listen").hits[0]
    assert top.fused == pytest.approx(1 - top.vec_distance, abs=1e-5)


def test_filters(filled: Memory) -> None:
    # min_score=0: the filter, not the relevance floor, decides what an unrelated memory does here
    assert {h.text for h in filled.search("ocean", since="2026-06-15", min_score=0).hits} == {
        "Dreamt of a library under the sea",
        "Quarterly budget review went badly",
    }
    assert [h.text for h in filled.search("ocean", kind="dream").hits] == [
        "Dreamt of a library under the sea"
    ]
    assert [h.text for h in filled.search("whales", tags=["MUSIC"]).hits] == [
        "We listened to humpback whale songs from the ocean"
    ]
    heavy = filled.search("review", min_weight=0.7).hits
    assert [h.text for h in heavy] == ["Quarterly budget review went badly"]
    assert filled.search("ocean", until="2026-01-01").hits == []
    # a bare date as `until` includes that whole day
    filled.write(gesture="An afternoon swim in the ocean", created_at="2026-09-10T15:00:00Z")
    assert [
        h.text for h in filled.search("ocean", since="2026-09-10", until="2026-09-10").hits
    ] == ["An afternoon swim in the ocean"]


def test_turns_are_searched_by_default_and_narrowed_on_request(filled: Memory) -> None:
    # #37: an imported past is findable before any memory is written about it
    types = {h.type for h in filled.search("name the project").hits}
    assert types == {"narrative", "turn"}
    narrow = filled.search("name the project", include_turns=False).hits
    assert narrow and all(h.type == "narrative" for h in narrow)
    # a filter no turn can meet (kind, tags, weight) means memories only
    assert all(h.type == "narrative" for h in filled.search("project", kind="narrative").hits)
    assert all(h.type == "narrative" for h in filled.search("project", min_weight=0).hits)


def test_lexical_mode_and_bad_arguments(filled: Memory) -> None:
    hits = filled.search("budget", mode="lex").hits
    assert hits[0].text.startswith("Quarterly budget") and hits[0].vec_rank is None
    with pytest.raises(InvalidInput, match="ask for 1–200"):
        filled.search("x", k=0)
    with pytest.raises(InvalidInput, match="query is empty"):
        filled.search("  ")
    with pytest.raises(InvalidInput, match="mode="):
        filled.search("x", mode="fuzzy")


def test_embedder_down_means_lexical_with_a_warning_and_no_lost_writes(settings: Settings) -> None:
    down = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", retries=0, timeout=0.3, dim=384)
    app = Tideline(settings, embedder=down)
    m = app.memory
    m.sync_turn("s", "user", "the budget meeting moved to Thursday")
    n = m.write(gesture="Budget meeting moved", tags=["work"])
    assert n.id and m.stats()["narratives"] == 1 and m.stats()["narrative_vectors"] == 0
    result = m.search("budget", include_turns=True)
    assert {h.type for h in result.hits} == {"narrative", "turn"}
    assert result.warnings and "lexical only" in result.warnings[0]
    app.close()


def test_a_rare_word_the_index_matched_is_never_cut_by_the_floor(memory: Memory) -> None:
    # #37: `memo search lvextend` found its note at bm25 #1 and cosine #1, relevance under the
    # floor. A rare term the index matched (and carrying the query's weight) is evidence.
    for text in ("the build is green again", "lunch at noon", "the backup ran overnight"):
        memory.sync_turn("s", "user", text)
    memory.sync_turn("s", "user", "grow the volume with lvextend -r -L +20G /dev/vg0/var")
    found = memory.search("lvextend", min_score=0.99).hits
    assert [h.text for h in found] == ["grow the volume with lvextend -r -L +20G /dev/vg0/var"]
    assert (
        found[0].score < 0.99
        and found[0].rare
        and "kept under the floor: 1 rare word matched" in found[0].explain()
    )
    # the same rare word beside two words no record holds carries a third of the query: cut
    assert memory.search("lvextend zanzibar quokka", min_score=0.99).hits == []


def test_a_turn_search_on_postgresql_takes_a_bounded_number_of_statements(
    filled: Memory, engine: str
) -> None:
    """Issue 34: the turn search (its levers, the narratives' list, the turns' lists, their
    statistics, distances and rows) was 31 statements on PostgreSQL, each a wait on the
    server, then 20–22; 8 now (two for each index searched, the rest the owners' rows, each
    read once a search; tests/memory/test_search_statements.py holds it on a larger home). A
    count, so none creep back."""
    if engine != "postgresql":
        pytest.skip("PostgreSQL's statements")
    from tideline.store._postgres import PgDatabase

    db = filled.raw.db
    assert isinstance(db, PgDatabase)
    filled.search_turns("the whale-listen project", 10)  # the statistics after the writes
    before = db.statements
    hits = filled.search_turns("what did we name the whale project?", 10)
    assert hits and "whale-listen" in hits[0].text
    assert db.statements - before <= 8
