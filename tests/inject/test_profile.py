"""The profile in the blocks: the snapshot in T0, facts by weight in T3 (near expiry ranks lower),
facts a message touches and their causal neighbours in T1p, an open question offered once in
T1q, session memory in T1s — each within its budget. The profile is built through the real
`Profile`/`Changeset` API on the fixed memory, with the profile's own clock moved by hand."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_until
from tests.inject.conftest import Fixed, clock
from tests.llm.conftest import llm_settings
from tests.llm_server import LLMServer
from tests.profile.conftest import Clock
from tideline.app import Tideline, inject_config
from tideline.embed import Embedder
from tideline.inject import Block, MemoryProvider, Section
from tideline.llm import NO_LLM_NOTE
from tideline.profile import FactDraft, Profile, Ref

pytestmark = pytest.mark.engines

START = dt.datetime(2026, 4, 1, 9, 0, tzinfo=dt.UTC)
SLEEPLESS = "I couldn't sleep again last night"
#: A message no fact is about: every fact below the relevance floor (a short, generic one
#: such as "tell me a joke" can reach it: the facts take the turns' calibration).
UNRELATED = "What is the weather like on Mars today?"


@dataclass
class Known:
    profile: Profile
    clock: Clock
    ids: dict[str, int]


def build_profile(fixed: Fixed) -> Known:
    """Facts, edges and strategies about Kai, as Sleep would write them."""
    app, turns = fixed.app, fixed.turns
    profile_clock = Clock(START)
    profile = Profile(app.db, app.memory, clock=profile_clock, lock=app.db_lock)
    cs = profile.read().changeset()
    refs: dict[str, Ref] = {
        # said a month before the rest (valid time follows the evidence, and no turn of the
        # fixed memory is that old: this one rests on none, so it starts at the clock's time)
        "mood": cs.add_fact(
            FactDraft("user", "mood", "nervous about moving abroad", decay_days=40)
        ),
    }
    profile.apply(cs)
    profile_clock.advance(days=32)  # the mood has 8 of its 40 days left: the last quarter
    cs = profile.read().changeset()
    drafts = {
        "job": FactDraft("user", "job", "baker at a bakery in Lisbon", decay_days=365),
        "shifts": FactDraft("user", "work", "long night shifts at the bakery", decay_days=40),
        "sleep": FactDraft("user", "health", "trouble sleeping", decay_days=40),
        "garden": FactDraft("user", "hobby", "grows tomatoes and basil", decay_days=40),
        "anna": FactDraft("Anna", "relation", "Kai's sister, lives in Lisbon", decay_days=None),
        "coffee": FactDraft("user", "drink", "drinks a lot of coffee", decay_days=40),
    }
    refs |= {k: cs.add_fact(d, turn_ids=(turns["t5"],)) for k, d in drafts.items()}
    cs.add_edge("causes", refs["shifts"], refs["sleep"])
    cs.add_edge("contradicts", refs["coffee"], refs["sleep"])  # not a kind T1p follows
    cs.add_edge("related_to", refs["job"], refs["anna"])
    cs.add_strategy("probe", refs["sleep"], "Are the night shifts still keeping you awake?")
    cs.add_strategy("clarify", refs["garden"], "Do the tomatoes get enough sun on the balcony?")
    applied = profile.apply(cs)
    mood = profile.facts(category="mood")[0].id
    ids = {k: applied.ids[r] for k, r in refs.items() if k != "mood"} | {"mood": mood}
    cs = profile.read().changeset()
    cs.snapshot(
        "# What I know (snapshot 2026-05-03)\n\n## About the user\n- job: baker at a bakery in Lisbon",
        {"facts": []},
    )
    profile.apply(cs)
    profile.index_facts(app.embedder)
    return Known(profile, profile_clock, ids)


@pytest.fixture
def known(fixed: Fixed) -> Known:
    return build_profile(fixed)


def provider(fixed: Fixed, known: Known, **changes: Any) -> MemoryProvider:
    base = fixed.provider(**changes)
    return MemoryProvider(
        base.memory,
        base.config,
        profile=known.profile,
        session_memory=base.session_memory,
        clock=clock,
    )


def section(block: Block, tier: str) -> Section:
    return next(s for s in block.sections if s.tier == tier)


def refs(block: Block, tier: str) -> list[str]:
    return [i.ref for i in section(block, tier).items] if tier in block.tiers else []


def fact_ref(known: Known, *names: str) -> list[str]:
    return [f"f:{known.ids[n]}" for n in names]


def test_snapshot_in_t0_and_facts_by_weight_in_t3(fixed: Fixed, known: Known) -> None:
    block = provider(fixed, known).identity()
    t0 = section(block, "T0")
    assert [p.title for p in t0.parts][:2] == [
        "who I am (SOUL.md)",
        "what I know (the profile's latest snapshot)",
    ]
    assert "  - job: baker at a bakery in Lisbon" in t0.text
    t3 = section(block, "T3")
    facts = t3.parts[0]
    assert facts.title.startswith("what I understand (7 of 7 live facts")
    weights = {i.ref: i.weight for i in facts.items}
    # Kept heaviest first: the mood (8 of 40 days left) fades below every fresh fact.
    assert facts.items[-1].ref == fact_ref(known, "mood")[0]
    assert weights[fact_ref(known, "mood")[0]] == pytest.approx(0.86, abs=0.01)
    assert all(w == 1.0 for r, w in weights.items() if r != fact_ref(known, "mood")[0])
    # Shown by subject (the user first, then people) and category.
    assert "[f:" in t3.text and "user · health: trouble sleeping" in t3.text
    lines = [line for line in t3.text.splitlines() if line.startswith("[f:")]
    assert lines[-1].endswith("Anna · relation: Kai's sister, lives in Lisbon")
    assert [p.title for p in t3.parts][1].startswith("topics, largest first")
    for gone in ("no snapshot", "no live facts", "not yet", "does not exist"):
        assert not any(gone in n for n in block.notes), block.notes


def test_a_fact_near_expiry_is_cut_before_a_fresh_one(fixed: Fixed, known: Known) -> None:
    block = provider(fixed, known, t3_facts=6).identity()
    shown = refs(block, "T3")
    assert fact_ref(known, "mood")[0] not in shown
    assert set(fact_ref(known, "garden", "job", "sleep")) <= set(shown)
    # Once expired it leaves the active profile (Sleep closes it at its next run).
    known.clock.advance(days=9)
    block = provider(fixed, known).identity()
    assert fact_ref(known, "mood")[0] not in refs(block, "T3")


def test_a_topic_pulls_in_its_causes_from_the_graph(fixed: Fixed, known: Known) -> None:
    block = provider(fixed, known, facts_k=1).prefetch_block(SLEEPLESS)
    t1p = section(block, "T1p")
    matched, linked = t1p.parts
    assert [i.ref for i in matched.items] == fact_ref(known, "sleep")
    assert [i.ref for i in linked.items] == fact_ref(known, "shifts")
    sleep_id = known.ids["sleep"]
    assert f"causes f:{sleep_id}] user · work: long night shifts at the bakery" in t1p.text
    assert "coffee" not in t1p.text  # contradicts is not followed
    assert linked.title == "linked to them in the knowledge graph (causes, related_to, supports)"
    quiet = provider(fixed, known).prefetch_block(UNRELATED)
    assert "T1p" not in quiet.tiers
    assert any(n.startswith("T1p: no profile fact is relevant") for n in quiet.notes)


@pytest.mark.parametrize("message", [SLEEPLESS, "how are things at the bakery?", UNRELATED])
def test_t1p_is_the_fact_search_with_its_floor(fixed: Fixed, known: Known, message: str) -> None:
    """T1p's facts are the profile's search and its relevance floor, in its order (it once
    kept only the facts whose cosine reached a floor of its own, 0.83 for e5)."""
    qvec = fixed.app.embedder.embed_query(message)  # type: ignore[union-attr]
    p = provider(fixed, known, facts_k=3, graph_k=0)
    found = known.profile.fact_hits(message, qvec, 3)
    assert all(h.score >= fixed.app.memory.min_score for _, h in found)
    found = [(f, h) for f, h in found if h.score >= p.config.min_score]  # pushed unasked
    block = p.prefetch_block(message)
    shown = section(block, "T1p").items if "T1p" in block.tiers else []
    assert [i.ref for i in shown] == [f"f:{f.id}" for f, _ in found]
    assert [i.extra for i in shown] == [f"{f.status} relevance {h.score:.2f}" for f, h in found]


#: Everyday messages about nothing the profile holds (short ones sit near every short fact).
EVERYDAY = [
    "write a haiku about rain on a tin roof",
    "hello there",
    "can you summarise this article about quantum computing",
    "what's 17 times 23?",
    "translate 'good morning' into French",
    "recommend a sci-fi novel",
    "how do I reverse a list in Python",
    "tell me a joke",
    "what time is it in Tokyo",
]


def test_nothing_is_pushed_into_an_everyday_message(fixed: Fixed, known: Known) -> None:
    """Search answers what is asked from its floor; injection puts things into a context
    nobody asked for, so a fact, a memory or a question needs `inject_min_score` of the same
    relevance (on the one floor alone "tell me a joke" got four facts and the night-shift
    question). The messages that are about the profile keep theirs."""
    p = provider(fixed, known)
    for message in EVERYDAY:
        block = p.prefetch_block(message)
        assert not {"T1p", "T1q"} & set(block.tiers), message
        t1 = [s for s in block.sections if s.tier == "T1"]
        assert not [i for s in t1 for i in s.items if i.ref.startswith("n:")], message
    assert {s.status for s in known.profile.strategies(status=None)} == {"open"}
    shown = refs(p.prefetch_block(SLEEPLESS), "T1p")
    assert set(fact_ref(known, "sleep", "shifts")) <= set(shown)


def test_an_open_question_is_offered_once(fixed: Fixed, known: Known) -> None:
    p = provider(fixed, known)
    assert "T1q" not in p.prefetch_block(UNRELATED).tiers  # unrelated: nothing offered
    assert {s.status for s in known.profile.strategies(status=None)} == {"open"}
    block = p.prefetch_block(SLEEPLESS)
    t1q = section(block, "T1q")
    [item] = t1q.items
    assert item.text == "Are the night shifts still keeping you awake?"
    assert item.extra == f"probe f:{known.ids['sleep']}"
    assert t1q.parts[0].title.startswith("a question to ask naturally if it fits")
    asked = {s.question: s.status for s in known.profile.strategies(status=None)}
    assert asked["Are the night shifts still keeping you awake?"] == "asked"
    assert asked["Do the tomatoes get enough sun on the balcony?"] == "open"
    assert "T1q" not in p.prefetch_block(SLEEPLESS).tiers  # never the same question twice
    # A closed fact's clarify is never offered (it ended obsolete with the fact) ...
    garden = "The tomatoes and basil in the garden are ripe"
    known.profile.close(known.ids["garden"], why="expired")
    assert "T1q" not in p.prefetch_block(garden).tiers
    [ended] = [s for s in known.profile.strategies(status="resolved") if s.kind == "clarify"]
    assert (ended.outcome, ended.resolved_why) == (
        "obsolete",
        f"fact #{known.ids['garden']} closed: expired",
    )
    # ... but a verify, which asks after an expired fact, still finds its topic.
    cs = known.profile.read().changeset()
    cs.add_strategy("verify", known.ids["garden"], "Still growing tomatoes and basil?")
    known.profile.apply(cs)
    assert [i.text for i in section(p.prefetch_block(garden), "T1q").items] == [
        "Still growing tomatoes and basil?"
    ]


def test_no_questions_when_switched_off(fixed: Fixed, known: Known) -> None:
    block = provider(fixed, known, strategies_k=0).prefetch_block(SLEEPLESS)
    assert "T1q" not in block.tiers
    assert {s.status for s in known.profile.strategies(status=None)} == {"open"}


def chat(memory: Any, n: int = 16) -> None:
    memory.sync_turn("chat", "user", "My daughter Mia starts violin lessons on Tuesday.")
    for i in range(n - 1):
        role = ("assistant", "user")[i % 2]
        memory.sync_turn("chat", role, f"Turn {i} about the weather and the train.")


def test_session_memory_with_a_session_key(fixed: Fixed, known: Known) -> None:
    chat(fixed.app.memory)
    p = provider(fixed, known)
    block = p.prefetch_block("When is Mia's violin lesson?", session="chat")
    t1s = section(block, "T1s")
    assert t1s.parts[0].title == "recalled from earlier in this session (close to the message)"
    first = fixed.app.memory.session_turns("chat")[0]
    assert f"t:{first.id}" in [i.ref for i in t1s.items]
    t1_turns = {i.ref for i in section(block, "T1").items if i.ref.startswith("t:")}
    assert not t1_turns & {i.ref for i in t1s.items}  # T1's recent turns are not repeated
    assert f"T1s: summary {NO_LLM_NOTE}" in block.notes
    # Without a session key there is no session memory.
    assert "T1s" not in p.prefetch_block("When is Mia's violin lesson?").tiers


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        yield s


def test_session_summary_from_the_llm(
    tmp_path: Path, server: LLMServer, e5: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("BASE_URL", "API_KEY", "MODEL", "RUN_BUDGET", "STRUCTURED"):
        monkeypatch.delenv(f"TIDELINE_LLM_{name}", raising=False)
    app = Tideline(llm_settings(server.url, home=str(tmp_path / "home")), embedder=e5)
    try:
        chat(app.memory)
        server.script(
            {"summary": "Mia, the user's daughter, starts violin."}, step="session_summary"
        )
        sessions = app.session_memory
        p = MemoryProvider(
            app.memory,
            inject_config(app.settings),
            session_memory=sessions,
            clock=clock,
        )

        def summarised() -> Block | None:
            # the fold runs in the background; a prefetch waits for it only a quarter second
            block = p.prefetch_block("When is Mia's violin lesson?", session="chat")
            title = section(block, "T1s").parts[0].title
            return block if title == "summary of this session so far" else None

        block = wait_until(summarised, timeout=60, interval=0.1)
        t1s = section(block, "T1s")
        assert t1s.items[0].text == "Mia, the user's daughter, starts violin."
        assert server.asked == ["session_summary"]
        assert not any(n.startswith("T1s:") for n in block.notes)
        assert app.provider.session_memory is not None  # the composition root wires it too
    finally:
        app.close()


def test_budgets_hold(fixed: Fixed, known: Known) -> None:
    chat(fixed.app.memory)
    budgets = {"T0": 120, "T3": 90, "T1": 120, "T1s": 100, "T1p": 90, "T1q": 80}
    p = provider(fixed, known, budgets=budgets)
    identity = p.identity()
    turn = p.prefetch_block(SLEEPLESS, session="chat")
    assert {"T0", "T3"} <= set(identity.tiers) and {"T1s", "T1p", "T1q"} <= set(turn.tiers), (
        turn.notes
    )
    for block in (identity, turn):
        for s in block.sections:
            assert s.tokens <= s.budget, (s.tier, s.tokens, s.budget)
            assert p.count(s.text) <= s.tokens
    assert any(n.startswith("T3: ") and "cut to fit 90 tokens" in n for n in identity.notes)
    full = provider(fixed, known).prefetch_block(SLEEPLESS, session="chat")  # T1q: asked once
    cut = {s.tier: s.tokens for s in turn.sections}
    whole = {s.tier: s.tokens for s in full.sections}
    assert all(cut[t] <= whole[t] for t in cut.keys() & whole.keys())
    assert any(cut[t] < whole[t] for t in cut.keys() & whole.keys())


def test_without_a_profile_one_note_says_so(fixed: Fixed) -> None:
    p = MemoryProvider(fixed.app.memory, fixed.provider().config, clock=clock)
    block = p.identity()
    assert block.notes[0].startswith("profile: none attached")
    assert "T1p" not in p.prefetch_block(SLEEPLESS).tiers
