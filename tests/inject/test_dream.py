"""What dreaming adds to injection: the self-concept in T0 (the latest reflections, each with the
memories it rests on), the open threads in T3, and dreams never injected as something remembered
(T1, T2, T4 and T0 leave them out, however well they match)."""

from __future__ import annotations

import pytest

from tests.inject.conftest import Fixed
from tideline.inject import Block

pytestmark = pytest.mark.engines


def parts(block: Block, tier: str) -> dict[str, list[str]]:
    section = next((s for s in block.sections if s.tier == tier), None)
    assert section is not None, block.notes
    return {p.title: [i.text.splitlines()[0] for i in p.items] for p in section.parts}


def refs(block: Block, tier: str) -> list[str]:
    return [i.ref for s in block.sections if s.tier == tier for i in s.items]


def reflect(fixed: Fixed, gesture: str, at: str, importance: int, rests_on: list[int]) -> int:
    """A reflection as combing writes it: a narrative resting on memories (its grounds)."""
    dream = fixed.app.dream
    n = fixed.app.memory.write(
        kind="reflection", gesture=gesture, importance=importance, created_at=at
    )
    with fixed.app.memory.db.transaction():
        dream.stores.basis.add(n.id, rests_on)
    return n.id


def test_t0_shows_the_latest_reflections_with_their_grounds(fixed: Fixed) -> None:
    old = fixed.memories["reflection"]  # importance 4, 2026-05-02
    job, flight = fixed.memories["job"], fixed.memories["flight"]
    new = reflect(fixed, "I let Kai lead when he is sure", "2026-05-03T02:00:00Z", 2, [job, flight])
    assert (
        fixed.app.memory.narratives.get([old])[0].weight
        > fixed.app.memory.narratives.get([new])[0].weight
    )  # heaviest first would keep the old sentence on top for good

    block = fixed.provider().identity()

    concept = parts(block, "T0")["self-concept (reflections, newest first)"]
    assert concept == [
        "I let Kai lead when he is sure",
        "I reassure Kai before I ask what he needs",
    ]
    t0 = next(s for s in block.sections if s.tier == "T0")
    item = next(i for i in t0.items if i.ref == f"n:{new}")
    assert item.extra == f"rests on n:{min(job, flight)}, n:{max(job, flight)}"

    one = fixed.provider(t0_reflections=1).identity()
    assert parts(one, "T0")["self-concept (reflections, newest first)"] == [
        "I let Kai lead when he is sure"
    ]
    none = fixed.provider(t0_reflections=0).identity()
    assert "self-concept (reflections, newest first)" not in parts(none, "T0")


def test_a_superseded_reflection_leaves_the_self_concept(fixed: Fixed) -> None:
    old = fixed.memories["reflection"]
    fixed.app.memory.write(
        kind="reflection",
        gesture="I reassure Kai, and then I listen",
        importance=4,
        supersedes=old,
        created_at="2026-05-03T01:00:00Z",
    )

    concept = parts(fixed.provider().identity(), "T0")["self-concept (reflections, newest first)"]

    assert concept == ["I reassure Kai, and then I listen"]


def test_t3_lists_the_open_threads_last_touched_first(fixed: Fixed) -> None:
    dream = fixed.app.dream
    job, garden = fixed.memories["job"], fixed.memories["garden"]
    first = dream.open_thread("Will Kai find a flat in Lisbon?", "June is close", [job])
    second = dream.open_thread("Do the tomatoes get enough sun?", "", [garden])
    closed = dream.open_thread("Which day is the flight?", "", [fixed.memories["flight"]])
    dream.close_thread(closed.id, "resolved", "the 3rd")
    dream.touch_thread(first.id, "Anna found two places", [])

    block = fixed.provider().identity()

    assert sorted(parts(block, "T3")["open threads, last touched first"]) == [
        "Do the tomatoes get enough sun?",
        "Will Kai find a flat in Lisbon? — June is close",
    ]  # (touched within the same second here: the order is touched_at, then newest id)
    t3 = next(s for s in block.sections if s.tier == "T3")
    item = next(i for i in t3.items if i.ref == f"thread:{first.id}")
    assert item.text.endswith("→ Anna found two places") and item.extra == f"from n:{job}"
    assert f"thread:{second.id}" in refs(block, "T3")
    assert f"thread:{closed.id}" not in refs(block, "T3")

    fewer = fixed.provider(t3_threads=1).identity()
    assert len([r for r in refs(fewer, "T3") if r.startswith("thread:")]) == 1


def test_dreams_are_never_injected_as_remembered(fixed: Fixed) -> None:
    lived = fixed.memories["job"]
    dream = fixed.app.memory.write(
        kind="dream",
        gesture="A dream of the bakery job in Lisbon and the move in June",
        context="Kai got the bakery job in Lisbon and moved in June, in a boat of bread.",
        created_at="2026-05-03T03:00:00Z",
        tags=["lisbon", "work"],
    ).id
    message = "Kai got the bakery job in Lisbon and will move in June"

    provider = fixed.provider(t4_trigger=100)  # T4 runs too
    turn = provider.prefetch_block(message)
    identity = provider.identity()

    shown = refs(turn, "T1") + refs(turn, "T4")
    assert f"n:{lived}" in shown  # the lived memory with the same words is found
    assert f"n:{dream}" not in shown
    assert f"n:{dream}" not in refs(identity, "T0") + refs(identity, "T2")
    assert "boat of bread" not in turn.text + identity.text
