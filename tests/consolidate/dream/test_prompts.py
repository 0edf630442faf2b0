"""The dream prompts: listed, versioned, rendered with a day's inputs (for MCP prompts too)."""

from __future__ import annotations

import pytest

from tests.consolidate.dream.conftest import CONVERSATION, DAY, Day
from tideline.consolidate import list_prompts, render_prompt
from tideline.errors import InvalidInput

pytestmark = pytest.mark.engines


def test_the_prompts_are_listed_with_their_versions_and_inputs() -> None:
    found = {p.name: p for p in list_prompts()}
    assert sorted(found) == ["dream_digest", "dream_drift", "dream_sleep", "dream_solidify"]
    assert found["dream_solidify"].inputs == ("day", "unindexed")
    assert found["dream_digest"].layer == "comb"
    assert all(p.version >= 1 and p.description for p in found.values())


def test_a_prompt_renders_with_its_inputs_for_the_pipeline_and_by_hand() -> None:
    inputs = {"day": "2026-03-14", "memories": "[7] a memory of flour"}
    auto = render_prompt("dream_sleep", inputs)
    hand = render_prompt("dream_sleep", inputs, by_hand=True)
    assert auto.user == "## day\n2026-03-14\n\n## memories\n[7] a memory of flour"
    assert "Answer with one JSON object" in auto.system and "memory_write" not in auto.system
    assert "memory_write" in hand.system and "Answer with one JSON" not in hand.system
    assert hand.text().endswith("[7] a memory of flour") and auto.label == "dream_sleep@2"
    assert [m["role"] for m in auto.messages] == ["system", "user"]


def test_wrong_names_and_inputs_are_refused() -> None:
    with pytest.raises(InvalidInput, match="no dream prompt 'extract'"):
        render_prompt("extract", {})
    with pytest.raises(InvalidInput, match=r"missing \['memories'\]"):
        render_prompt("dream_sleep", {"day": "x"})
    with pytest.raises(InvalidInput, match=r"unknown \['mood'\]"):
        render_prompt("dream_sleep", {"day": "x", "memories": "", "mood": ""})


def test_todays_inputs_come_from_the_dream(day: Day) -> None:
    t = day.say("s1", CONVERSATION)
    dream = day.dream()
    solidify = render_prompt(
        "dream_solidify", dream.prompt_inputs("dream_solidify", DAY), by_hand=True
    )
    assert f"`{t[2]}`" in solidify.user and "Mia" in solidify.user
    day.memory.write(
        gesture="A bakery with Mia.", source_links=[t[2]], created_at=f"{DAY}T10:00:00Z"
    )
    assert "A bakery with Mia." in dream.prompt_inputs("dream_sleep", DAY)["memories"]
    assert "A bakery with Mia." in dream.prompt_inputs("dream_digest", DAY)["memories"]
