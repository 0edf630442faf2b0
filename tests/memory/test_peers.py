"""Memory that comes from a peer: the MCP reference memory server's graph, a mem0 export and a
Letta agent file, each recognised by `--format auto`, landing as turns with their own times and
as facts backed by those turns, with what is left out counted and re-import adding nothing
(tests/data/peers, built from each format's own documentation and published examples)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tideline.app import Tideline
from tideline.memory import Memory
from tideline.profile import Fact

PEERS = Path(__file__).resolve().parents[1] / "data" / "peers"


def facts(app: Tideline) -> set[tuple[str, str, str, str]]:
    return {(f.subject, f.category, f.value, f.valid_from) for f in app.profile.facts()}


def turns(memory: Memory, key: str) -> list[tuple[str, str, str]]:
    return [(t.role, t.text, t.ts) for t in memory.session_turns(key)]


def test_mcp_memory_graph(app: Tideline, tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    graph.write_text((PEERS / "memory.jsonl").read_text())
    os.utime(graph, (1_700_000_000, 1_700_000_000))  # the graph's only time: when it was written
    s = app.memory.import_file(graph)
    assert (s.format, s.detected, s.turns_added, s.facts_added) == ("mcp-memory", True, 4, 4)
    assert s.skipped_kinds == {"entities without observations": 1}
    assert [(p.line, p.message.split(";")[0]) for p in s.problems] == [
        (5, "an entity needs a 'name', an 'entityType' and a list of 'observations'")
    ]
    written = "2023-11-14T22:13:20Z"
    assert turns(app.memory, "mcp-memory/memory") == [
        ("assistant", "John_Smith (person): Speaks fluent Spanish", written),
        ("assistant", "John_Smith (person): Graduated in 2019", written),
        ("assistant", "Anthropic (organization): Makes Claude", written),
        ("assistant", "John_Smith works at Anthropic", written),
    ]
    assert facts(app) == {
        ("John_Smith", "person", "Speaks fluent Spanish", written),
        ("John_Smith", "person", "Graduated in 2019", written),
        ("Anthropic", "organization", "Makes Claude", written),
        ("John_Smith", "works_at", "Anthropic", written),
    }
    fact = next(f for f in app.profile.facts() if f.category == "works_at")
    assert [e.text for e in fact.evidence] == ["John_Smith works at Anthropic"]

    with graph.open("a") as fh:  # the server wrote one more observation since
        fh.write('{"type":"entity","name":"Lena","entityType":"person","observations":["Nurse"]}\n')
    again = app.memory.import_file(graph)
    assert (again.turns_added, again.turns_existing) == (1, 4)
    assert (again.facts_added, again.facts_existing) == (1, 4)


def test_mem0_export(app: Tideline) -> None:
    s = app.memory.import_file(PEERS / "mem0.json")
    assert (s.format, s.detected, s.sessions, s.turns_added, s.facts_added) == (
        "mem0",
        True,
        2,
        3,
        3,
    )
    assert [p.message for p in s.problems] == ["memory 4: no 'memory' text"]
    assert turns(app.memory, "mem0/alex") == [
        ("user", "Is a vegetarian and allergic to nuts", "2024-07-20T01:30:00Z"),
        ("user", "Prefers TypeScript over JavaScript for new projects", "2025-03-01T10:00:00Z"),
    ]
    assert facts(app) == {
        ("user", "food", "Is a vegetarian and allergic to nuts", "2024-07-20T01:30:00Z"),
        ("user", "work", "Prefers TypeScript over JavaScript for new projects", "2025-03-01T10:00:00Z"),
        ("self", "mem0", "Answers in short paragraphs", "2025-03-03T09:00:00Z"),
    }  # fmt: skip
    assert all(isinstance(f, Fact) and f.evidence for f in app.profile.facts())
    again = app.memory.import_file(PEERS / "mem0.json")
    assert (again.turns_added, again.facts_added, again.facts_existing) == (0, 0, 3)


def test_letta_agent_file(app: Tideline) -> None:
    s = app.memory.import_file(PEERS / "agent.af")
    assert (s.format, s.detected, s.problems) == ("letta", True, [])
    assert s.skipped_kinds == {
        "system and tool messages": 2,
        "heartbeats and system alerts": 1,  # the login
        "non-text parts": 1,  # the assistant's reasoning
    }
    assert turns(app.memory, "letta/memgpt_agent") == [
        ("user", "Hi, I'm Chad. I sail on weekends.", "2025-10-31T22:58:00Z"),
        ("assistant", "Nice to meet you, Chad! Where do you sail?", "2025-10-31T22:58:05Z"),
        ("user", "On the Berkeley marina.", "2025-10-31T22:59:00Z"),
    ]
    latest = "2025-10-31T22:59:00Z"  # blocks have no time: as they stood at the last message
    assert [t[1].split(":")[0] for t in turns(app.memory, "letta/memgpt_agent/blocks")] == [
        "human",
        "persona",
    ]
    assert facts(app) == {
        ("user", "human", "First name: Chad", latest),
        ("user", "human", "Occupation: Computer science PhD student at UC Berkeley", latest),
        ("self", "persona", "I am Sam.", latest),
        ("self", "persona", "My voice is soft and soothing.", latest),
    }
    again = app.memory.import_file(PEERS / "agent.af")
    assert (again.turns_added, again.turns_existing, again.facts_added) == (0, 5, 0)


def test_an_agent_file_saved_as_a_json_string_is_read(memory: Memory, tmp_path: Path) -> None:
    wrapped = tmp_path / "wrapped.af"
    wrapped.write_text(json.dumps((PEERS / "agent.af").read_text()))
    s = memory.import_file(wrapped)
    assert (s.format, s.turns_added, s.facts_added) == ("letta", 5, 4)
