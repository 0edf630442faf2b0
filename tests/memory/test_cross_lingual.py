"""A question in Russian or Chinese about an English conversation finds the turn that answers it
(#37 item 5): the lexical list of words the records do not hold carries no evidence, the query
vector is centred, a name written in Cyrillic names its speaker (`Policy.scripts`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tideline.memory import Memory

#: Two friends catching up over two evenings, as a chat export holds them.
CHAT = [
    ("Gina", "Hey Jon! Long time no see. How was the trip to the coast?"),
    ("Jon", "Great, thanks! We drove down on Friday and stayed in a tiny cabin by the beach."),
    ("Gina", "Sounds lovely. Did the kids enjoy it?"),
    ("Jon", "They loved it. We built sandcastles and collected shells every morning."),
    ("Gina", "I finally finished decorating the store this week."),
    ("Jon", "That's huge! What did you go for in the end?"),
    ("Gina", "Warm wood shelves, soft lighting and a big mirror by the fitting room."),
    ("Jon", "Nice. My studio still needs paint, I keep putting it off."),
    ("Gina", "You'll get there. Are you still teaching the Tuesday class?"),
    ("Jon", "Yes, eight students now. Two of them are total beginners."),
    ("Gina", "Oh, I got a new tattoo last month, a small bird on my wrist."),
    ("Jon", "A bird? What does it mean to you?"),
    ("Gina", "It stands for freedom, dancing without caring what anyone thinks."),
    ("Jon", "That's beautiful. I've been reading a lot lately, mostly business books."),
    ("Gina", "Anything good?"),
    ("Jon", "The Lean Startup. It has some great tips for running a small studio."),
    ("Gina", "I should read it too. My sales dipped in spring."),
    ("Jon", "Hang in there. I'm not giving up on the studio either."),
]


def _chat(memory: Memory) -> dict[str, int]:
    for n, (speaker, text) in enumerate(CHAT):
        session = "evening-1" if n < 10 else "evening-2"
        day = "12" if n < 10 else "19"
        memory.sync_turn(session, "user", text, speaker, f"2023-03-{day}T20:{n:02d}:00Z")
    memory.embed_pending()
    return {t.text: t.id for t in memory.raw.recent(100)}


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Что символизирует татуировка Джины?", "It stands for freedom"),
        ("Какую книгу сейчас читает Джон?", "The Lean Startup"),
        ("Gina 的纹身象征着什么？", "It stands for freedom"),
    ],
)
def test_a_question_in_another_language_finds_the_english_answer(
    memory: Memory, question: str, answer: str
) -> None:
    ids = _chat(memory)
    turn = next(i for text, i in ids.items() if answer in text)
    found = [h.id for h in memory.search_turns(question, 3)]
    assert turn in found, [h.text for h in memory.search_turns(question, 3)]
    # the rule is what finds it: main's ranking without it does not
    before = replace(memory.turn_policy, scripts=False)
    assert turn not in [h.id for h in memory.search_turns(question, 3, policy=before)]
