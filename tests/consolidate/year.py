"""A year of conversation in LoCoMo's shape, scripted for the loopback server, and the audit of
#24's first "done when" clause: everything the profile and DREAM hold lives in the
conversation's time (valid time) and was learnt today (record time).

`YEAR` is a small self-contained conversation (six sessions, January to December 2023) with
LoCoMo's own annotations (`session_N_observation`, `events_session_N`); the LoCoMo test feeds a
real conversation through the same `script_extraction`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer

S = "speaker_a"
SESSIONS: list[tuple[str, list[tuple[str, str]], dict[str, list[str]], list[str]]] = [
    # (LoCoMo date, turns (speaker, text), observations (text → turn), events)
    ("10:00 am on 14 January, 2023",
     [("Maya", "I just started as a nurse at St. Mary's hospital."), ("Sam", "Congratulations!"),
      ("Maya", "My sister Lena lives in Porto, I miss her.")],
     {"Maya works as a nurse at St. Mary's hospital": ["D1:1"], "Maya's sister Lena lives in Porto": ["D1:3"]},
     ["Maya started a job as a nurse"]),
    ("6:30 pm on 2 March, 2023",
     [("Maya", "I'm training for the Lisbon half marathon in April."), ("Sam", "How far do you run?"),
      ("Maya", "Twelve kilometres on Sundays, at dawn.")],
     {"Maya is training for a half marathon": ["D2:1"], "Maya runs at dawn on Sundays": ["D2:3"]},
     ["Maya began training for the Lisbon half marathon"]),
    ("9:15 am on 20 May, 2023",
     [("Maya", "I ran the half marathon last month, in 1:58!"), ("Sam", "Amazing."),
      ("Maya", "Now we are thinking about adopting a dog.")],
     {"Maya ran the Lisbon half marathon": ["D3:1"], "Maya is thinking about adopting a dog": ["D3:3"]},
     ["Maya ran the Lisbon half marathon"]),
    ("8:00 pm on 11 August, 2023",
     [("Maya", "We adopted a dog! His name is Biscuit."), ("Sam", "What breed?"),
      ("Maya", "A beagle, two years old.")],
     {"Maya adopted a beagle named Biscuit": ["D4:1", "D4:3"]},
     ["Maya adopted Biscuit"]),
    ("11:00 am on 29 October, 2023",
     [("Maya", "I moved to Lyon for a job at a new hospital."), ("Sam", "A big change!"),
      ("Maya", "Biscuit loves the parks by the Rhône.")],
     {"Maya moved to Lyon": ["D5:1"], "Maya works at a hospital in Lyon": ["D5:1"]},
     ["Maya moved to Lyon"]),
    ("7:45 pm on 18 December, 2023",
     [("Maya", "Christmas in Porto with Lena next week."), ("Sam", "Have a lovely time."),
      ("Maya", "I still run at dawn, even in the cold.")],
     {"Maya will spend Christmas in Porto with Lena": ["D6:1"], "Maya still runs at dawn": ["D6:3"]},
     ["Maya plans Christmas in Porto"]),
]  # fmt: skip


def year_conversation() -> dict[str, Any]:
    """`SESSIONS` as a LoCoMo sample (what `tideline import --format locomo` reads)."""
    conv: dict[str, Any] = {"speaker_a": "Maya", "speaker_b": "Sam"}
    for n, (when, turns, observations, events) in enumerate(SESSIONS, 1):
        conv[f"session_{n}_date_time"] = when
        conv[f"session_{n}"] = [
            {"speaker": who, "dia_id": f"D{n}:{i}", "text": text}
            for i, (who, text) in enumerate(turns, 1)
        ]
        conv[f"session_{n}_observation"] = {"Maya": [[t, d] for t, d in observations.items()]}
        conv[f"events_session_{n}"] = {"Maya": events, "date": when.split(" on ")[1]}
        if "Lena" in " ".join(text for _, text in turns):  # not LoCoMo's: who is mentioned
            conv[f"people_session_{n}"] = [{"name": "Lena", "relation": "sister"}]
    return {"sample_id": "year", "conversation": conv}


def sessions(conv: dict[str, Any]) -> list[int]:
    return sorted(
        int(k.split("_")[1]) for k in conv if k.startswith("session_") and k.count("_") == 1
    )


def script_extraction(agent: Agent, server: LLMServer, conv: dict[str, Any], sample: str) -> None:
    """Each session's extraction answered with its own LoCoMo annotations: the observations
    (their turns cited by dia_id) and the events of that session."""
    for n in sessions(conv):
        turns = agent.memory.session_turns(f"locomo/{sample}/session_{n}")
        by_dia = {t.external_id: t.id for t in turns}
        observations = [
            {"type": "statement", "topic": speaker.lower(), "text": text,
             "about": "user" if speaker == conv["speaker_a"] else speaker,
             "turns": [by_dia[d] for d in ([dias] if isinstance(dias, str) else dias) if d in by_dia]}
            for speaker, items in (conv.get(f"session_{n}_observation") or {}).items()
            for text, dias in items
        ]  # fmt: skip
        events = [
            {"title": text, "turns": [turns[0].id]}
            for speaker, texts in (conv.get(f"events_session_{n}") or {}).items()
            if speaker != "date"
            for text in texts
        ]
        people = conv.get(f"people_session_{n}") or []
        server.script(
            {"summary": f"session {n}", "observations": observations, "events": events,
             "relationships": people},
            step="extract",
        )  # fmt: skip


@dataclass
class Span:
    """The conversation's time: from its first day to the end of its last (events are days)."""

    start: str
    end: str

    def holds(self, when: str | None) -> bool:
        return when is not None and self.start <= when <= self.end


def audit(agent: Agent, span: Span, today: str) -> dict[str, int]:
    """Every fact, evidence row, observation, event, person, edge, strategy, session summary and
    reflection: valid time inside `span`, record time `today` (a day, YYYY-MM-DD). Returns how
    many of each were checked."""
    p = agent.profile
    facts = p.facts(status=None)
    for f in facts:
        assert span.holds(f.valid_from) and span.holds(f.last_seen_at), f
        assert f.valid_to is None or span.holds(f.valid_to) or f.valid_to == f.expires_at, f
        assert all(span.holds(e.said_at) for e in f.evidence), f
        assert f.created_at.startswith(today) and (f.retired_at or today).startswith(today), f
        for ch in p.timeline(f.id).changes:
            assert span.holds(ch.at) or ch.at == f.expires_at, (f, ch)
            assert (ch.recorded_at or today).startswith(today), (f, ch)
    observations = p.observations()
    assert all(span.holds(o.said_at) and o.created_at.startswith(today) for o in observations)
    events = p.events(active=None)
    for e in events:
        assert span.holds(e.valid_from) and span.holds(e.said_at), e
        assert e.created_at.startswith(today), e
    people = p.relationships()
    for r in people:
        assert span.holds(r.first_seen_at) and span.holds(r.last_seen_at), r
    strategies = p.strategies(status=None)
    for s in strategies:  # a verify arises when its fact expires; one unanswered lapses later
        fact = p.fact(s.fact_id) if s.fact_id is not None else None
        arose = span.holds(s.valid_from) or (fact is not None and s.valid_from == fact.expires_at)
        assert arose and s.created_at.startswith(today), s
        assert s.valid_to is None or s.valid_to < "2025", s  # settled in that time, not today's
        assert (s.resolved_at or today).startswith(today), s
    digests = p.digests()
    for d in digests:
        assert span.holds(d.valid_from) and span.holds(d.valid_to), d
        assert d.made_at.startswith(today), d
    edges = p.edges(live=False)
    for g in edges:
        assert span.holds(g.valid_from) and g.created_at.startswith(today), g
    reflections = [n for n in agent.memory.narratives.all(links=True) if n.kind == "reflection"]
    for n in reflections:
        assert span.holds(n.created_at) and (n.recorded_at or "").startswith(today), n
    return {
        "facts": len(facts), "observations": len(observations), "events": len(events),
        "people": len(people), "edges": len(edges), "strategies": len(strategies),
        "summaries": len(digests),
        "reflections": len(reflections),
    }  # fmt: skip
