"""Keywords from mixed-script text: jieba POS for Chinese, stemming and stop words elsewhere."""

from __future__ import annotations

import pytest

from tideline.analysis import Keyword, KeywordExtractor

EXTRACTOR = KeywordExtractor()  # the default settings


def keys(text: str) -> list[str]:
    return [k.key for k in EXTRACTOR.extract(text)]


def test_chinese_keeps_nouns_verbs_and_adjectives() -> None:
    found = keys("今天我拒绝了他的请求，因为边界很重要。我在逃避失控的感觉。")
    for word in ("拒绝", "边界", "重要", "逃避", "失控", "感觉"):
        assert word in found
    for function_word in ("了", "的", "因为", "我", "很", "今天"):
        assert function_word not in found


def test_english_stems_and_drops_stop_words() -> None:
    kws = EXTRACTOR.extract("I was remembering the paintings; she remembered a painting.")
    assert [k.key for k in kws] == ["rememb", "paint", "rememb", "paint"]
    assert [k.surface for k in kws] == ["remembering", "paintings", "remembered", "painting"]


def test_russian_stems_and_drops_stop_words() -> None:
    found = keys("Мы говорили о границах, и она вспоминала границы. Ещё ёлка")
    assert found.count("границ") == 2
    assert "мы" not in found and "она" not in found and "еще" not in found
    assert "елк" in found  # ё folds to е


def test_mixed_scripts_in_one_text() -> None:
    found = keys("debugging with 甜心 и отладка boundaries")
    assert found == ["debug", "甜心", "отладк", "boundari"]


def test_numbers_possessives_and_short_words() -> None:
    kws = EXTRACTOR.extract("Caroline's 2023 gpt4 x AI")
    assert Keyword("carolin", "Caroline") in kws
    assert "2023" not in [k.key for k in kws]
    assert "gpt4" in [k.key for k in kws]
    assert "x" not in [k.key for k in kws]


def test_han_adjacent_to_latin_is_split() -> None:
    assert keys("abc边界") == ["abc", "边界"]


def test_configurable_extractor() -> None:
    ex = KeywordExtractor(latin_language="german", stopwords=set(), min_cjk_length=1)
    assert [k.key for k in ex.extract("die Häuser")] == ["die", "haus"]
    with pytest.raises(ValueError, match="no Snowball stemmer"):
        KeywordExtractor(latin_language="klingon")


def test_empty_text() -> None:
    assert EXTRACTOR.extract("") == ()
    assert EXTRACTOR.extract("，。!?") == ()
