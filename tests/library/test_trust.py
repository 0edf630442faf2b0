"""The lexical list counts as much as its best hit covers the query."""

from __future__ import annotations

import pytest

from tideline.library._trust import coverage, lexical_weight


def test_a_command_line_is_fully_covered_by_its_example() -> None:
    example = "tar tar\ntar\n- Extract files matching a pattern:\n`tar xf {{x}} --wildcards`"
    assert coverage("tar xf --wildcards", example) == 1.0
    assert lexical_weight("tar xf --wildcards", example, floor=0.2) == 1.0


def test_a_translated_question_shares_only_a_stray_token() -> None:
    page = "fossil-ci fossil ci\n> This command is an alias of `fossil commit`."
    share = coverage("此命令为 `fossil commit` 的别名。", page)  # Chinese words never match English
    assert 0.0 < share < 0.5
    assert lexical_weight("此命令为 `fossil commit` 的别名。", page, 0.2) == pytest.approx(
        0.2 + 0.8 * share**2
    )


def test_stop_words_do_not_count_and_stop_words_only_judge_nothing() -> None:
    assert coverage("how do I extract files", "extract the files") == 1.0
    assert coverage("how do I", "nothing in common") == 1.0
    assert lexical_weight("backup", "", floor=0.3) == pytest.approx(0.3)
