"""Topic clusters: planted themes come back, the DF filter drops generic words and noise."""

from __future__ import annotations

import pytest

from tests.analysis.corpora import planted
from tideline.analysis import TopicCluster, build_topics, merge_topics


def by_key(topics: list[TopicCluster]) -> dict[str, TopicCluster]:
    return {t.keyword: t for t in topics}


@pytest.mark.parametrize("lang", ["zh", "ru", "en"])
def test_planted_themes_are_topics(lang: str) -> None:
    corpus = planted(lang)
    topics = by_key(build_topics(corpus.docs))
    for key, members in corpus.themes.items():
        assert set(topics[key].member_ids) == members
        assert topics[key].df == 6
    # Generic (100%), wide (23% > 20%) and noise (2 < 3) are gone; borderline (exactly 3) stays.
    labels = {t.label for t in topics.values()}
    assert corpus.generic not in labels
    assert corpus.wide not in labels
    assert corpus.noise not in labels
    assert corpus.borderline in labels
    assert len(topics) == 4


def test_label_is_the_most_common_surface_form() -> None:
    docs = [(i, "paintings") for i in range(4)] + [(i, "painting") for i in range(4, 6)]
    docs += [(i, f"filler{i}") for i in range(6, 40)]
    assert by_key(build_topics(docs))["paint"].label == "paintings"
    # A tie goes to the shorter form: boundary (3) vs boundaries (3).
    assert by_key(build_topics(planted("en").docs))["boundari"].label == "boundary"


def test_mixed_languages_in_one_corpus() -> None:
    docs = planted("zh").docs + planted("ru").docs + planted("en").docs
    topics = by_key(build_topics(docs))
    expected = {**planted("zh").themes, **planted("ru").themes, **planted("en").themes}
    for key, members in expected.items():
        assert set(topics[key].member_ids) == members
    # Each generic word is now in 1/3 of the narratives: still over 20%.
    assert "memori" not in topics and "记忆" not in topics


def test_df_thresholds_are_parameters() -> None:
    corpus = planted("en")
    strict = {t.label for t in build_topics(corpus.docs, min_df=4)}
    assert corpus.borderline not in strict
    loose = {t.label for t in build_topics(corpus.docs, max_df=0.25)}
    assert corpus.wide in loose
    noisy = {t.label for t in build_topics(corpus.docs, min_df=2)}
    assert corpus.noise in noisy
    everything = {t.label for t in build_topics(corpus.docs, max_df=1.0)}
    assert corpus.generic in everything


def test_sorted_deterministically() -> None:
    corpus = planted("en")
    first = build_topics(corpus.docs)
    again = build_topics(list(reversed(corpus.docs)))
    assert first == again
    assert [t.df for t in first] == sorted((t.df for t in first), reverse=True)
    for t in first:
        assert list(t.member_ids) == sorted(t.member_ids)


def test_merging_off_by_default_and_on_by_flag() -> None:
    # "limit" travels with "boundary": the same six narratives.
    docs = [(nid, text + (" limit" if nid < "en-06" else "")) for nid, text in planted("en").docs]
    apart = by_key(build_topics(docs))
    assert "limit" in apart and "boundari" in apart
    merged = build_topics(docs, merge=True, merge_threshold=0.9)
    joined = [t for t in merged if len(t.keywords) > 1]
    assert len(joined) == 1
    assert set(joined[0].keywords) == {"limit", "boundari"}
    assert set(joined[0].member_ids) == planted("en").themes["boundari"]
    assert " / " in joined[0].label
    assert len(merged) == len(apart) - 1


def test_merging_is_transitive_and_respects_threshold() -> None:
    x = TopicCluster("x", "x", tuple(range(0, 6)), 6, ("x",))
    y = TopicCluster("y", "y", tuple(range(1, 7)), 6, ("y",))  # J(x, y) = 5/7
    z = TopicCluster("z", "z", tuple(range(2, 8)), 6, ("z",))  # J(y, z) = 5/7, J(x, z) = 1/2
    far = TopicCluster("far", "far", (100, 101, 102), 3, ("far",))
    merged = merge_topics([x, y, z, far], threshold=0.7)
    assert [(t.keywords, t.df) for t in merged] == [(("x", "y", "z"), 8), (("far",), 3)]
    assert merge_topics([x, y, z, far], threshold=0.75) == [x, y, z, far]


def test_degenerate_inputs() -> None:
    assert build_topics([]) == []
    assert build_topics([(1, "boundary boundary boundary")]) == []
    same = [(i, "boundary") for i in range(50)]
    assert build_topics(same) == []  # in 100% of narratives: generic
    assert build_topics([(1, ""), (2, "")]) == []
    with pytest.raises(ValueError, match="appears twice"):
        build_topics([(1, "a"), (1, "b")])
    with pytest.raises(ValueError, match="max_df"):
        build_topics([], max_df=0)
