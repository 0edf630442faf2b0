"""The lexical analyser (stems, jieba words, query stop words), score fusion, date windows and
the re-ordering levers of issue 12."""

from __future__ import annotations

from pathlib import Path

from tideline.memory import date_window
from tideline.search import (
    Hit,
    Policy,
    Scope,
    TextIndex,
    analyse,
    diversify,
    lift,
    parse_query,
    retrieve,
)
from tideline.search._fusion import convex_fuse
from tideline.store import open_database


def test_one_analyser_stems_english_and_russian_and_cuts_chinese() -> None:
    assert analyse("Caroline researched adoption agencies") == "carolin research adopt agenc"
    assert analyse("размеры файлов") == "размер файл"
    assert "北京" in analyse("如何在北京查看文件").split()
    assert analyse("x86_64 v2", "plain") == "x86 64 v2"


def test_a_query_drops_stop_words_only_when_two_content_words_remain() -> None:
    q = parse_query("What did Caroline research?", "snowball", stop_words=True)
    assert q.match == '"carolin" OR "research"'
    assert parse_query("go build", "snowball", stop_words=True).match == '"go" OR "build"'
    assert '"all"' in (parse_query("git log --all", "snowball", stop_words=True).match or "")
    # nor on the trigram side: a dropped word is no substring to find nor to require verbatim
    assert "what" not in q.verbatim and "caroline" in q.verbatim
    assert "what" not in (q.trigram or "")


def test_inflected_words_meet_and_a_stale_index_is_reanalysed(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db")
    old = TextIndex(db, "docs", "plain")
    old.upsert_many([(1, "She researched adoption agencies"), (2, "файлы на диске")])
    assert all(h.lex_source == "trigram" for h in old.lexical("research", 5))  # no stem match
    new = TextIndex(db, "docs")  # the owner now wants snowball: answers plainly until reanalysed
    assert new.stale and new.analyser == "plain"
    new.reanalyse([(1, "She researched adoption agencies"), (2, "файлы на диске")])
    assert not new.stale
    assert new.lexical("agency research", 5)[0].id == 1
    assert new.lexical("файл", 5)[0].id == 2
    assert TextIndex(db, "docs").analyser == "snowball"  # recorded


def test_convex_fusion_keeps_a_strong_lexical_lead() -> None:
    lex = [Hit(1, lex_rank=1, lex_score=9.0, lex_source="bm25"), Hit(2, lex_rank=2, lex_score=1.0)]
    vec = [Hit(3, vec_rank=1, vec_distance=0.20), Hit(1, vec_rank=2, vec_distance=0.21)]
    vec += [Hit(2, vec_rank=3, vec_distance=0.40)]
    fused = convex_fuse([lex, vec], alpha=0.5)
    assert [h.id for h in fused] == [1, 3, 2]
    assert fused[0].fusion == "convex"


def test_retrieve_runs_the_convex_policy(tmp_path: Path) -> None:
    db = open_database(tmp_path / "c.db")
    index = TextIndex(db, "docs")
    index.upsert_many([(1, "blue whale song"), (2, "red fox")])
    found = retrieve(Scope(index), "whale", None, 5, "lex", Policy(fusion="convex"))
    assert [h.id for h in found.hits] == [1]


def test_date_window_reads_the_dates_questions_name() -> None:
    since, until = date_window("What did Tim say on 16 November, 2023?") or ("", "")
    assert since.startswith("2023-11-13") and until.startswith("2023-11-19")
    since, until = date_window("Which city did John recommend in January 2024?") or ("", "")
    assert since.startswith("2023-12-29") and until.startswith("2024-02-03")
    assert date_window("When did Caroline go to the support group?") is None


def test_lift_and_diversify_reorder() -> None:
    base = [Hit(1, score=0.5), Hit(2, score=0.4), Hit(3, score=0.3)]
    lifted = lift(base, {3: 0.5, 4: 0.1}, 1.0, "dates")
    assert [h.id for h in lifted] == [3, 1, 2, 4]
    assert lifted[0].lifts == {"dates": 0.5} and base[2].lifts == {}
    same = {1: "a", 2: "a", 3: "b"}
    assert [h.id for h in diversify(base, same, 1)] == [1, 3, 2]
