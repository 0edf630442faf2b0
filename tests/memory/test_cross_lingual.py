"""A question in Russian or Chinese about an English conversation (#37 item 5): the index's own
term statistics say a script of the query is foreign, and a name written in Cyrillic names its
speaker (`Policy.scripts`)."""

from __future__ import annotations

from tideline.memory._speakers import named
from tideline.search import Counts
from tideline.search._lexical import scripts


def test_a_script_the_index_holds_none_of_is_foreign() -> None:
    stats = Counts(records=10, tokens=100, df={"gina": 10, "tattoo": 1})
    # a Chinese question that kept the name: 1 of 4 terms in a script the index holds
    assert scripts(["gina", "纹身", "象征", "什么"], stats) == (0.25, True)
    # a Russian one: nothing to judge the share by, but foreign
    assert scripts(["татуировк", "джин"], stats) == (1.0, True)
    # English over English, a word absent and a number: nothing foreign
    assert scripts(["gina", "tattoo", "lvextend", "2023"], stats) == (1.0, False)


def test_a_name_written_in_cyrillic_names_the_speaker_it_sounds_like() -> None:
    speakers = ["Gina", "Jon", "Caroline", "Melanie", "James"]
    assert named("Что символизирует татуировка Джины?", speakers, by_sound=True) == {"Gina"}
    assert named("Чего, как Джон говорит Джине, он не станет делать?", speakers, True) == {
        "Jon",
        "Gina",
    }
    assert named("Что Кэролайн посоветовала Мелани?", speakers, True) == {"Caroline", "Melanie"}
    assert named("Как зовут собак Джеймса?", speakers, True) == {"James"}
    # a part of a name, a stop word that sounds like one, or the rule off: no one
    assert named("Мел и Кэрол были там", speakers, True) == set()
    assert named("Там был Тим", ["Tim", "Tam"], True) == {"Tim"}
    assert named("Что символизирует татуировка Джины?", speakers) == set()
