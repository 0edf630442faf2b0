"""Combing, night drift and the symbolic dream, each against scripted answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.consolidate.dream.conftest import CONVERSATION, DAY, Day
from tests.llm.conftest import llm_settings
from tests.llm_server import LLMServer
from tideline.analysis.attention import log_hits
from tideline.app import Tideline
from tideline.embed import Embedder
from tideline.memory import compute_weight
from tideline.profile import FactDraft

pytestmark = pytest.mark.engines


def lived(day: Day, t: list[int]) -> list[int]:
    """Three memories of the day, written by the agent itself, linked to their turns."""
    stamp = f"{DAY}T10:00:00Z"
    specs = [
        ("Quit the bank, scared.", [t[0]], {"importance": 4, "emotional": 3, "unresolved": 2, "related_entities": ["bank"]}),
        ("A bakery with Mia.", [t[2]], {"importance": 4, "emotional": 4, "unresolved": 3, "related_entities": ["Mia"]}),
        ("The harbour, undecided.", [t[4]], {"importance": 2, "emotional": 2, "unresolved": 4, "tags": ["sea"]}),
    ]  # fmt: skip
    return [
        day.memory.write(gesture=g, source_links=links, created_at=stamp, **kw).id
        for g, links, kw in specs
    ]


def test_combing_reweighs_within_bounds_and_writes_self_concept_conflicts_and_threads(
    day: Day, server: LLMServer
) -> None:
    a, b, c = lived(day, day.say("s1", CONVERSATION))
    cs = day.agent.profile.read().changeset()  # believed before the day combed
    cs.add_fact(FactDraft("user", "job", "works at the bank", valid_from="2026-03-01T09:00:00Z"))
    day.agent.profile.apply(cs)
    fact = day.agent.profile.facts()[0].id
    server.script(
        {
            "reweigh": [
                {"id": a, "importance": 1, "why": "it mattered less"},  # 4 → 3: one step a night
                {"id": 4242, "importance": 5},  # not shown: refused
            ],
            "self_concept": [
                {
                    "text": "I stay with people through big, frightening changes.",
                    "rests_on": [a, b],
                },
                {"text": "Invented grounds.", "rests_on": [999]},
            ],
            "conflicts": [{"a": a, "b": c, "why": "quit vs undecided"}],
            "fact_conflicts": [
                {"memory": a, "fact_id": fact, "question": "Do you still work at the bank?"}
            ],
            "threads_open": [{"title": "Where will the bakery be?", "raised_by": [b, c]}],
        },
        step="dream_digest",
    )
    dream = day.dream()

    report = dream.run(date=DAY, layers=["comb"])

    comb = report.layer("comb")
    assert comb.status == "done", report.lines()
    assert comb.changes["refused"] == 2
    assert day.memory.narratives.require(a).importance == 3
    concept = dream.self_concept(5)
    assert [(s.narrative.gesture[:6], s.rests_on) for s in concept] == [("I stay", [a, b])]
    assert concept[0].narrative.kind == "reflection"
    assert sorted(concept[0].narrative.source_links) == sorted(
        day.memory.narratives.require(a).source_links
        + day.memory.narratives.require(b).source_links
    )
    threads = dream.threads()
    assert sorted((t.kind, t.memories) for t in threads) == [
        ("conflict", [a, c]),
        ("direction", [b, c]),
    ]
    probe = [s for s in day.agent.profile.strategies() if s.kind == "probe"]
    assert len(probe) == 1 and probe[0].fact_id == fact
    assert (probe[0].dream_run_id, probe[0].run_id) == (report.run_id, None)  # the run that made it
    assert [f.value for f in day.agent.profile.facts()] == ["works at the bank"]  # no fact written
    assert sorted(comb.written) == ["reflections", "reweighed", "threads"]


def test_combing_touches_and_closes_threads(day: Day, server: LLMServer) -> None:
    a, b, _ = lived(day, day.say("s1", CONVERSATION))
    server.script(
        {"threads_open": [{"title": "The bakery", "raised_by": [b]}]}, step="dream_digest"
    )
    day.dream().run(date=DAY, layers=["comb"])
    [thread] = day.dream().threads()
    server.script(
        {"threads_touch": [{"id": thread.id, "note": "Mia agreed", "memories": [a]}],
         "threads_close": [{"id": thread.id, "status": "resolved", "why": "they signed"}]},
        step="dream_digest",
    )  # fmt: skip

    day.dream().run(date="2026-03-15", layers=["comb"])

    [after] = day.dream().threads(status=None)
    assert (after.status, after.memories, after.notes) == (
        "resolved",
        sorted([a, b]),
        ["Mia agreed", "they signed"],
    )
    assert day.dream().threads() == []


def test_drift_may_find_nothing_and_says_so(day: Day, server: LLMServer) -> None:
    lived(day, day.say("s1", CONVERSATION))

    report = day.dream().run(date=DAY, layers=["drift"])

    drift = report.layer("drift")
    assert (drift.status, drift.written) == ("done", {})
    assert drift.note == "no connection found (nothing written)"
    assert drift.detail["found"] is False and len(drift.detail["path"]) >= 2
    record = day.dream().runs()[0].records[0]
    assert (record.status, record.detail["found"]) == ("done", False)
    assert day.narratives("reflection") == []


def test_drift_walks_away_from_the_heaviest_memory_and_may_connect(
    day: Day, server: LLMServer
) -> None:
    _a, b, _c = lived(day, day.say("s1", CONVERSATION))
    server.script(
        {
            "found": True,
            "connection": "Both are about leaving a harbour.",
            "gesture": "Leaving is my theme.",
        },
        step="dream_drift",
    )

    report = day.dream().run(date=DAY, layers=["drift"])

    drift = report.layer("drift")
    assert drift.detail["seed"] == b  # the heaviest lived memory
    far = drift.detail["path"][-1][0]
    assert far != b
    [reflection] = day.narratives("reflection")
    assert drift.written == {"reflections": [reflection.id]}
    assert day.dream().self_concept(1)[0].rests_on == sorted([b, far])
    prompt = server.chats[-1]["messages"][1]["content"]
    assert "A bakery with Mia." in prompt
    # the next night starts from another memory
    nxt = day.dream().run(date="2026-03-15", layers=["drift"])
    assert nxt.layer("drift").detail["seed"] not in (b,)


def test_a_dream_has_importance_one_and_never_outweighs_lived_memory(
    day: Day, server: LLMServer
) -> None:
    ids = lived(day, day.say("s1", CONVERSATION))
    server.script(
        {"symbols": ["a key", "flour", "a tide"], "story": "The harbour filled with flour.",
         "reflection": "I carry other people's leaps.", "emotional": 4, "unresolved": 3,
         "importance": 5},
        step="dream_sleep",
    )  # fmt: skip

    report = day.dream().run(date=DAY, layers=["dream"])

    [dream] = day.narratives("dream")
    [left] = day.narratives("reflection")
    assert report.layer("dream").written == {"dreams": [dream.id], "reflections": [left.id]}
    assert (dream.importance, dream.emotional, dream.unresolved) == (1, 4, 3)
    assert dream.tags == ["a key", "flour", "a tide"]
    assert day.dream().stores.basis.of([dream.id])[dream.id] == ids
    lived_same = compute_weight(4, 4, dream.recurrence, 3)
    assert dream.weight < lived_same
    # combing cannot raise a dream's importance either
    server.script(
        {"reweigh": [{"id": dream.id, "importance": 5, "emotional": 5}]}, step="dream_digest"
    )
    day.dream().run(date="2026-03-15", layers=["comb"])
    assert day.memory.narratives.require(dream.id).importance == 1


def test_a_day_without_memories_does_not_dream(day: Day, server: LLMServer) -> None:
    report = day.dream().run(date=DAY, layers=["comb", "dream"])
    assert [r.note for r in report.layers] == [
        "no memories to comb",
        "no memories of the day to dream of",
    ]
    assert server.asked == []


def test_drift_walks_by_embeddings_to_the_least_similar_memory(
    tmp_path: Path, server: LLMServer, e5: Embedder
) -> None:
    settings = llm_settings(server.url, home=str(tmp_path / "agent"))
    app = Tideline(settings, embedder=e5)
    try:
        stamp = f"{DAY}T10:00:00Z"
        texts = [
            ("We baked sourdough bread together all morning.", 5),
            ("The bread dough rose slowly in the warm kitchen.", 2),
            ("Flour and yeast for the bakery order.", 2),
            ("The tax office rejected the quarterly filing.", 1),
        ]
        ids = [app.memory.write(gesture=g, importance=imp, created_at=stamp).id for g, imp in texts]
        dream = app.dream

        report = dream.run(date=DAY, layers=["drift"])

        path = report.layer("drift").detail["path"]
        assert path[0] == [ids[0], "seed"]
        assert path[1][1] == "embedding"
        assert path[-1][0] == ids[3]  # the walk ends as far from bread as it can
    finally:
        app.close()


def test_a_dream_grounds_no_conflict_and_no_question_about_a_fact(
    day: Day, server: LLMServer
) -> None:
    a, _, _ = lived(day, day.say("s1", CONVERSATION))
    dreamt = day.memory.write(
        kind="dream", gesture="A dream of a bank made of bread", created_at=f"{DAY}T03:00:00Z"
    ).id
    cs = day.agent.profile.read().changeset()
    cs.add_fact(FactDraft("user", "job", "works at the bank"))
    day.agent.profile.apply(cs)
    fact = day.agent.profile.facts()[0].id
    server.script(
        {
            "conflicts": [{"a": a, "b": dreamt, "why": "the dream says otherwise"}],
            "fact_conflicts": [{"memory": dreamt, "fact_id": fact, "question": "A bread bank?"}],
        },
        step="dream_digest",
    )

    comb = day.dream().run(date=DAY, layers=["comb"]).layer("comb")

    assert comb.status == "done" and comb.changes["refused"] == 2
    assert f"memories [{dreamt}] are dreams, not lived memory" in comb.note
    assert day.dream().threads() == []
    assert [s for s in day.agent.profile.strategies() if s.kind == "probe"] == []


def test_the_dream_leaves_a_reflection_that_feeds_the_next_days_combing(
    day: Day, server: LLMServer
) -> None:
    a, b, _ = lived(day, day.say("s1", CONVERSATION))
    server.script(
        {"symbols": ["a key", "flour", "a tide"], "story": "The harbour filled with flour.",
         "reflection": "I carry other people's leaps.", "emotional": 4, "unresolved": 3},
        step="dream_sleep",
    )  # fmt: skip
    dream_report = day.dream().run(date=DAY, layers=["dream"])
    [dream] = day.narratives("dream")
    [left] = day.narratives("reflection")
    assert dream_report.layer("dream").written["reflections"] == [left.id]
    assert (left.gesture, left.importance, left.tags) == (
        "I carry other people's leaps.",
        1,
        ["dream"],
    )
    assert day.dream().stores.basis.of([left.id])[left.id] == [dream.id]  # marked: from a dream
    assert sorted(left.source_links) == sorted(dream.source_links)
    assert day.dream().self_concept() == []  # imagined: not the waking self-concept (T0)

    # the next day's combing reads it among yesterday's memories, never as a conflict's ground
    # nor a waking reflection's
    server.script(
        {"conflicts": [{"a": left.id, "b": a, "why": "dream vs day"}],
         "self_concept": [{"text": "I carry other people's leaps, and it steadies me.",
                           "rests_on": [left.id, b]}]},
        step="dream_digest",
    )  # fmt: skip
    report = day.dream().run(date="2026-03-15", layers=["comb"])
    comb = report.layer("comb")
    [asked] = [c for c in server.chats if "combing through one day" in c["messages"][0]["content"]]
    memories, concept = asked["messages"][1]["content"].split("## self concept\n")
    assert f"[{left.id}] " in memories and "tags: dream" in memories
    assert "I carry other people's leaps." not in concept.split("## threads")[0]
    assert (comb.changes["conflicts"], comb.changes["refused"]) == (0, 2)
    assert "conflict: memories" in comb.note and "self_concept: memories" in comb.note
    assert "are dreams, not lived memory" in comb.note
    # read, but never the ground of a waking reflection: nothing imagined enters T0
    assert day.dream().self_concept() == []
    assert [n.gesture for n in day.narratives("reflection")] == [left.gesture]


def test_combing_says_a_self_concept_sentence_once_and_reads_the_heatmap(
    day: Day, server: LLMServer
) -> None:
    a, b, c = lived(day, day.say("s1", CONVERSATION))
    log_hits(day.memory, [(a, 0.9), (a, 0.8), (b, 0.7)], "the bank", at=f"{DAY}T11:00:00Z")
    sentence = "I stay with people through big, frightening changes."
    for night, grounds in (("2026-03-14", [a]), ("2026-03-15", [b])):
        server.script(
            {"self_concept": [{"text": sentence, "rests_on": grounds},
                              {"text": sentence.upper(), "rests_on": [c]}]},
            step="dream_digest",
        )  # fmt: skip
        report = day.dream().run(date=night, layers=["comb"])
        comb = report.layer("comb")
        assert comb.status == "done", report.lines()

    assert (comb.changes["self_concept"], comb.changes["self_concept_repeated"]) == (0, 2)
    [held] = day.dream().self_concept()
    assert held.narrative.gesture == sentence and held.rests_on == sorted([a, b, c])
    assert len(day.narratives("reflection")) == 1  # said four times, written once
    [first, *_] = [
        c for c in server.chats if "combing through one day" in c["messages"][0]["content"]
    ]
    attention = first["messages"][1]["content"].split("## attention\n")[1]
    assert attention.startswith("3 retrieval hit(s) from 2026-03-08 to 2026-03-14")
    assert "3 hit(s) on memories in no cluster" in attention  # no soft clusters built here


def test_a_past_day_is_combed_and_drifted_with_what_existed_by_then(
    day: Day, server: LLMServer
) -> None:
    """Memories, reflections, threads and facts from after the day dreamt of are not shown."""
    a, b, c = lived(day, day.say("s1", CONVERSATION))
    later = "2026-03-17T10:00:00Z"
    signed = "Signed the lease on the harbour shop."
    after = day.memory.write(
        gesture=signed, created_at=later, importance=5, emotional=5, unresolved=5
    ).id
    day.memory.write(
        gesture="I am someone who finishes things.", kind="reflection", created_at=later
    )
    day.dream().stores.threads.open("Who runs the shop?", "later", [after], now=later, run_id=None)
    cs = day.agent.profile.read().changeset()
    cs.add_fact(FactDraft("user", "job", "runs a bakery", valid_from=later))
    day.agent.profile.apply(cs)

    assert day.dream().run(date=DAY, layers=["comb"]).layer("comb").status == "done"
    [asked] = [c for c in server.chats if "combing through one day" in c["messages"][0]["content"]]
    prompt = asked["messages"][1]["content"]
    assert "Quit the bank" in prompt
    for then in (signed, "finishes things", "Who runs the shop", "runs a bakery"):
        assert then not in prompt, then
    server.script(
        {"found": True, "connection": "Both leave.", "gesture": "I leave."}, step="dream_drift"
    )
    report = day.dream().run(date=DAY, layers=["drift"])
    assert {i for i, _ in report.layer("drift").detail["path"]} <= {a, b, c}


def test_drift_never_walks_onto_a_dream_and_says_a_sentence_once(
    day: Day, server: LLMServer
) -> None:
    lived(day, day.say("s1", CONVERSATION))
    day.dream().run(date=DAY, layers=["dream"])  # a dream, and the reflection it left
    imagined = {n.id for n in day.narratives() if n.kind == "dream" or "dream" in n.tags}
    assert len(imagined) == 2
    grounds: set[int] = set()
    for night in (DAY, "2026-03-15"):
        answer = {"found": True, "connection": "Both leave.", "gesture": "Leaving is my theme."}
        server.script(answer, step="dream_drift")
        path = day.dream().run(date=night, layers=["drift"]).layer("drift").detail["path"]
        walked = [i for i, _ in path]
        assert not set(walked) & imagined  # a waking reflection never rests on a dream's
        grounds |= {walked[0], walked[-1]}
    said = [n for n in day.narratives("reflection") if n.gesture == "Leaving is my theme."]
    assert len(said) == 1  # drift's sentence, said twice, written once
    [held] = day.dream().self_concept()
    assert held.narrative.id == said[0].id and set(held.rests_on) == grounds
