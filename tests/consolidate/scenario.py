"""One conversation that makes every step of the pipeline do something, scripted as defaults
(so a rerun gets the same answers): a move that contradicts a fact, a new job confirmed by the
LLM, an inferred habit, a sister, an event, an edge, a communication style; plus an expiring
fact and two duplicates already in the profile."""

from __future__ import annotations

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer
from tideline.profile import FactDraft


def seed_profile(agent: Agent) -> int:
    """Facts already known: Tokyo (id 1), an expiring mood, the same hobby twice."""
    cs = agent.profile.read().changeset()
    cs.add_fact(FactDraft("user", "city", "lives in Tokyo", decay_days=365))
    cs.add_fact(FactDraft("user", "mood", "tired this week", decay_days=3))
    cs.add_fact(FactDraft("user", "hobby", "plays Go"))
    cs.add_fact(FactDraft("user", "Hobby", "plays go."))
    agent.profile.apply(cs)
    agent.clock.advance(days=5)
    turns = agent.say(
        "move",
        ("user", "I moved to Osaka last month and started as a nurse there."),
        ("assistant", "Congratulations! How is Osaka?"),
        ("user", "Great, my sister Aiko lives nearby. Sorry, writing at 3am again."),
    )
    return turns[0]


def script(server: LLMServer, t: int) -> None:
    obs = [
        {"type": "contradiction", "topic": "city", "text": "The user moved to Osaka", "turns": [t]},
        {"type": "statement", "topic": "job", "text": "The user is a nurse", "turns": [t]},
        {
            "type": "behaviour",
            "topic": "habits",
            "text": "The user writes at 3am",
            "turns": [t + 2],
        },
    ]
    server.default("extract", {
        "summary": "Moved to Osaka, new job as a nurse", "tags": ["moving", "work"],
        "observations": obs,
        "relationships": [{"name": "Aiko", "relation": "sister", "details": "lives near Osaka"}],
        "events": [{"title": "moved to Osaka", "importance": 4, "decay_days": 60, "turns": [t]}],
    })  # fmt: skip
    server.default(
        "behaviour", {"facts": [{"category": "habits", "value": "night owl", "observations": [3]}]}
    )
    server.default("classify", {"decisions": [
        {"observation": 1, "action": "contradict", "fact_id": 1, "value": "lives in Osaka"},
        {"observation": 2, "action": "new", "category": "job", "value": "nurse", "decay_days": 365},
    ]})  # fmt: skip
    server.default(
        "verify", {"verdicts": [{"fact_id": -3, "verdict": "confirm", "why": "said plainly"}]}
    )
    server.default("arbitrate", {"decisions": [{"new_fact_id": -2, "decision": "accept_new"}]})
    server.default("edges", {"edges": [{"kind": "related_to", "from_fact": -2, "to_fact": -3}]})
    server.default("user_model", {"dimensions": [{"dimension": "directness", "value": "direct"}]})
