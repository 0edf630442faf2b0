"""Layer 0: narratives linked to exactly the chosen turns; invented links refused; idempotent."""

from __future__ import annotations

import pytest

from tests.consolidate.dream.conftest import CONVERSATION, DAY, Day
from tests.llm_server import LLMServer

pytestmark = pytest.mark.engines


def memory(gesture: str, links: list[int], **kw: object) -> dict[str, object]:
    return {"gesture": gesture, "importance": 4, "emotional": 4, "source_links": links, **kw}


def test_memories_link_exactly_the_chosen_turns_and_invented_links_are_refused(
    day: Day, server: LLMServer
) -> None:
    t = day.say("s1", CONVERSATION)
    other_day = day.say("s2", (("user", "Yesterday's weather was fine."),), day="2026-03-13")
    server.script(
        {
            "memories": [
                memory(
                    "I heard them quit the bank, scared and hopeful.", [t[0], t[2]], tags=["work"]
                ),
                memory("A bakery by the harbour, not yet decided.", [t[4]], unresolved=4),
                memory("An invented memory.", [t[1], 987654]),
                memory("A memory from another day.", [other_day[0]]),
                memory("A memory with no turns.", []),
            ]
        },
        step="dream_solidify",
    )
    report = day.dream().run(date=DAY, layers=["solidify"])

    assert report.ok, report.lines()
    written = day.narratives()
    assert [(n.gesture[:10], n.source_links) for n in written] == [
        ("I heard th", [t[0], t[2]]),
        ("A bakery b", [t[4]]),
    ]
    assert all(n.created_at.startswith(DAY) for n in written)
    layer = report.layer("solidify")
    assert layer.written == {"narratives": [n.id for n in written]}
    assert layer.changes["refused"] == 3
    assert "987654" in layer.note and str(other_day[0]) in layer.note
    prompt = server.chats[-1]["messages"][1]["content"]
    assert f"`{t[0]}`" in prompt and f"`{other_day[0]}`" not in prompt  # only the day's turns
    record = day.dream().runs()[0].records[0]
    assert (record.layer, record.status, record.written) == ("solidify", "done", layer.written)
    assert record.tokens_in > 0 and record.prompt == "dream_solidify@1"


def test_a_second_run_of_the_same_day_writes_nothing(day: Day, server: LLMServer) -> None:
    t = day.say("s1", CONVERSATION)
    server.default("dream_solidify", {"memories": [memory("Quit the bank.", [t[0]])]})
    first = day.dream().run(date=DAY)
    assert first.ok, first.lines()
    before = [(n.id, n.kind) for n in day.narratives()]
    asked = len(server.asked)

    second = day.dream().run(date=DAY)

    assert second.ok
    assert {r.status for r in second.layers} == {"earlier"}
    assert [(n.id, n.kind) for n in day.narratives()] == before
    assert len(server.asked) == asked  # not a single call


def test_turns_already_linked_are_not_offered_again(day: Day, server: LLMServer) -> None:
    t = day.say("s1", CONVERSATION)
    day.memory.write(
        gesture="Written by the agent itself.",
        source_links=[t[0], t[1]],
        created_at=f"{DAY}T08:00:00Z",
    )
    server.script({"memories": [memory("Again the bank.", [t[0]])]}, step="dream_solidify")

    report = day.dream().run(date=DAY, layers=["solidify"])

    prompt = server.chats[-1]["messages"][1]["content"]
    assert f"`{t[0]}`" not in prompt and f"`{t[2]}`" in prompt
    assert report.layer("solidify").changes["refused"] == 1
    assert len(day.narratives()) == 1


def test_a_quiet_day_asks_nothing(day: Day, server: LLMServer) -> None:
    report = day.dream().run(date=DAY, layers=["solidify"])
    assert report.layer("solidify").note == "nothing unindexed on this day"
    assert server.asked == []
