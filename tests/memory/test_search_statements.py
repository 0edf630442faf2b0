"""Issue 34: the product's turn search on PostgreSQL in a few statements. Each statement waits on
the server; the turn search reads two indexes (the turns, and the narratives for the memory
keys) and the owners' rows the levers need (texts, speakers, exchanges, neighbours, the hits
shown). It took ~20 statements at 300k turns; it is held here to 8."""

from __future__ import annotations

import pytest

from tideline.memory import Memory, NewTurn
from tideline.store._postgres import PgDatabase

#: The most statements one `Memory.search_turns` may send (a question naming no date).
MOST = 8

_TOPICS = [
    ("harbour", "We walked along the harbour at dusk and watched the boats come in"),
    ("painting", "I painted a lake sunrise last weekend, it took me three evenings"),
    ("adoption", "The adoption agency called back about the interview next month"),
    ("guitar", "My guitar lessons moved to Thursdays because of the new job"),
    ("marathon", "I finished the city marathon in four hours and ten minutes"),
    ("garden", "The tomatoes in the garden finally turned red this week"),
]


@pytest.fixture
def talked(memory: Memory) -> Memory:
    """Three sessions of two people talking (questions, answers, replies), a few memories
    pointing at their turns, vectors for all of them from the real e5."""
    for s in range(3):
        turns = []
        for n in range(40):
            topic, line = _TOPICS[(n + s) % len(_TOPICS)]
            who = "Caroline" if n % 2 else "Melanie"
            text = f"How is the {topic} going?" if n % 4 == 0 else f"{line} ({s}-{n})"
            turns.append(
                NewTurn(
                    "user" if n % 2 else "assistant",
                    text,
                    speaker=who,
                    timestamp=f"2023-0{s + 5}-1{n // 10}T1{n % 10}:00:00Z",
                )
            )
        memory.raw.add_turns(f"session-{s}", turns)
    ids = memory.raw.ids()
    for n, (topic, _) in enumerate(_TOPICS):
        memory.write(gesture=f"Melanie cares about the {topic}", source_links=ids[n::17][:3])
    memory.embed_pending()
    memory.db.execute("ANALYZE")
    return memory


@pytest.mark.parametrize("engine", ["postgresql"], indirect=True)
def test_the_product_turn_search_takes_a_few_statements(talked: Memory) -> None:
    db = talked.db
    assert isinstance(db, PgDatabase)
    questions = [
        "What did Caroline say about the harbour?",
        "How long did the marathon take?",
        "When are the guitar lessons?",
        "adoption interview",
        "What did Melanie paint?",
    ]
    talked.search_turns("what did we talk about?", 10)  # the first search reads what is kept
    sent = []
    for q in questions:
        before = db.statements
        hits = talked.search_turns(q, 10)
        sent.append(db.statements - before)
        assert hits, q
    assert max(sent) <= MOST, dict(zip(questions, sent, strict=True))
