"""Context keys and the turn-search levers: a turn is found by its neighbour's words and its
day, an old plain index is re-analysed on open, narratives lift their source turns."""

from __future__ import annotations

from dataclasses import replace

from tideline.app import Tideline, memory_policies, narrative_policy, turn_policy
from tideline.clock import system_clock
from tideline.config import DEFAULTS
from tideline.embed import Embedder
from tideline.memory import Memory
from tideline.search import Policy, TextIndex
from tideline.store import Database, Storage

#: Memory's search policies with every setting at its default.
NARRATIVES, TURNS = narrative_policy(DEFAULTS), turn_policy(DEFAULTS)
FILLER = ["The train was late again.", "Coffee first, then emails.", "Rain all week here."]


def _exchange(memory: Memory, turns: list[tuple[str, str]]) -> dict[str, int]:
    """The filler, then `turns` as session s1, embedded: each turn's id by its text."""
    for n, text in enumerate(FILLER * 2):
        memory.sync_turn("s0", "user", text, "Cy", f"2022-01-0{n + 1}T09:00:00Z")
    for n, (speaker, text) in enumerate(turns):
        memory.sync_turn("s1", "user", text, speaker, f"2023-05-08T13:0{n}:00Z")
    memory.embed_pending()
    return {t.text: t.id for t in memory.raw.recent(10, "s1")}


def _with(db: Storage, embedder: Embedder | None, policy: Policy) -> Memory:
    """Memory over the same home with this turn policy."""
    return Memory(db, embedder, narrative_policy=NARRATIVES, turn_policy=policy, clock=system_clock)


def _turns(memory: Memory) -> None:
    for n, text in enumerate(FILLER * 2):  # BM25 needs words that are rare in the collection
        memory.sync_turn("s0", "user", text, "Cy", f"2022-01-0{n + 1}T09:00:00Z")
    for n, (speaker, text) in enumerate(
        [
            ("Ann", "Did you paint that lake picture?"),
            ("Bo", "Yeah, last year, at sunrise."),
            ("Ann", "Lovely. How is the garden?"),
        ]
    ):
        memory.sync_turn("s1", "user", text, speaker, f"2023-05-08T10:0{n}:00Z")


def test_a_turn_is_found_by_its_neighbours_words_and_its_day(db: Database) -> None:
    memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    _turns(memory)
    by_text = {t.text: t.id for t in memory.raw.recent(10, "s1")}
    hits = memory.search_turns("Who painted it?", 3, mode="lex")
    # the answer lacks the word: its neighbour (the question it answers) brings it
    assert by_text["Yeah, last year, at sunrise."] in {h.id for h in hits}
    # the second turn's key gained its next neighbour when the third arrived
    garden = {h.id for h in memory.search_turns("garden", 3, mode="lex")}
    assert by_text["Yeah, last year, at sunrise."] in garden
    assert {h.session for h in memory.search_turns("Who wrote in May 2023?", 3, mode="lex")} == {
        "s1"
    }


def test_context_off_and_a_plain_index_is_reanalysed(db: Database) -> None:
    plain = Memory(
        db, None, analyser="plain", turn_context=0, **memory_policies(DEFAULTS), clock=system_clock
    )
    _turns(plain)
    assert plain.search_turns("painted", 3, mode="lex") == []  # no stems, no substring
    # the default analyser and keys: the index is rebuilt on open
    again = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    assert not again.raw.index.stale
    assert TextIndex(db, "turn_text").made == "snowball;ctx2"
    # stems found again (the reply Bo gave may rank first: the answer lever lifts it)
    found = again.search_turns("painted lakes", 2, mode="lex")
    assert "Did you paint that lake picture?" in {h.text for h in found}


def test_memory_keys_lift_their_source_turns(db: Database) -> None:
    plain = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    _turns(plain)
    garden = plain.search_turns("garden", 1, mode="lex")[0].id
    plain.write(gesture="Ann tends roses and tomatoes", source_links=[garden])
    assert plain.search_turns("roses", 1, mode="lex")[0].id == garden  # on by default
    off = Memory(
        db,
        None,
        narrative_policy=NARRATIVES,
        turn_policy=replace(TURNS, date_weight=0.0, memory_weight=0.0),
        clock=system_clock,
    )
    assert off.search_turns("roses", 1, mode="lex") == []


def test_a_speaker_the_question_names_lifts_their_turns(db: Database) -> None:
    memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    for n, text in enumerate(FILLER * 2):
        memory.sync_turn("s0", "user", text, "Cy", f"2022-01-0{n + 1}T09:00:00Z")
    said = [
        ("Bo", "I went hiking in the hills with my brother."),
        ("Caroline", "I went hiking near the lake this weekend."),
    ]
    for n, (speaker, text) in enumerate(said):
        memory.sync_turn("s2", "user", text, speaker, f"2023-06-0{n + 1}T10:00:00Z")
    hits = memory.search_turns("Where did Caroline go hiking?", 2, mode="lex")
    assert hits[0].speaker == "Caroline" and hits[0].lifts.get("speaker", 0.0) > 0
    assert "speaker" not in hits[1].lifts  # Bo is not named
    # a part of a name, or another person's, names no one
    for question in ("Where did Carol go hiking?", "Where did Cy go hiking?"):
        assert all("speaker" not in h.lifts for h in memory.search_turns(question, 2, mode="lex"))
    off = _with(db, None, replace(TURNS, speaker_weight=0.0))
    assert all("speaker" not in h.lifts for h in off.search_turns("Caroline hiking", 2, "lex"))


def test_named_matches_whole_names_case_folded() -> None:
    from tideline.memory._speakers import named

    speakers = ["Caroline", "Melanie", "Jo Ann", "X"]
    assert named("what did caroline's sister say?", speakers) == {"Caroline"}
    assert named("Did JO  ANN meet Melanie?", speakers) == {"Jo Ann", "Melanie"}
    assert named("Carol and Mel went out, x marks it", speakers) == set()


def test_a_question_found_lifts_the_reply_that_answers_it(db: Database) -> None:
    memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    _turns(memory)
    by_text = {t.text: t.id for t in memory.raw.recent(10, "s1")}
    asked, reply = (
        by_text["Did you paint that lake picture?"],
        by_text["Yeah, last year, at sunrise."],
    )
    talk = memory.raw.exchanges_of([asked, reply])
    assert talk[asked].answer == reply and talk[reply].answer is None  # the reply asks nothing
    hits = {h.id: h for h in memory.search_turns("the lake picture", 3, mode="lex")}
    assert hits[reply].lifts.get("answers", 0.0) > 0  # Bo's reply, after Ann's question
    assert "answers" not in hits[asked].lifts
    off = _with(db, None, replace(TURNS, answer_weight=0.0))
    assert all("answers" not in h.lifts for h in off.search_turns("the lake picture", 3, "lex"))


SUPPORT = [  # a LoCoMo exchange (conv-26, session 1): the first turn says it, the rest talk on
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    (
        "Melanie",
        "Wow, that's cool, Caroline! What happened that was so awesome? Did you hear any"
        " inspiring stories?",
    ),
    (
        "Caroline",
        "The transgender stories were so inspiring! I was so happy and thankful for all"
        " the support.",
    ),
    (
        "Melanie",
        "Wow, love that painting! So cool you found such a helpful group. What's it done for you?",
    ),
    (
        "Caroline",
        "The support group has made me feel accepted and given me courage to embrace myself.",
    ),
]


def _support(memory: Memory) -> dict[str, int]:
    for n, text in enumerate(FILLER * 2):
        memory.sync_turn("s0", "user", text, "Cy", f"2022-01-0{n + 1}T09:00:00Z")
    for n, (speaker, text) in enumerate(SUPPORT):
        memory.sync_turn("s1", "user", text, speaker, f"2023-05-08T13:0{n}:00Z")
    return {t.text: t.id for t in memory.raw.recent(10, "s1")}


def test_the_turn_that_says_the_words_ranks_above_its_neighbours(db: Database) -> None:
    """Each turn's lexical key holds its neighbours' words, so all five match alike; the own
    words lever puts the one that said "LGBTQ support group" first."""
    memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    said = _support(memory)[SUPPORT[0][1]]
    question = "When did Caroline go to the LGBTQ support group?"
    off = _with(db, None, replace(TURNS, own_weight=0.0))
    assert off.search_turns(question, 3, mode="lex")[0].id != said  # a neighbour came first
    first = memory.search_turns(question, 3, mode="lex")[0]
    assert first.id == said and first.lifts["own words"] > 0


def test_a_turns_neighbours_are_the_turns_around_it_in_its_session(db: Database) -> None:
    memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    ids = [_support(memory)[text] for _, text in SUPPORT]
    around = memory.raw.neighbours_of([ids[0], ids[2]])
    assert {i: sorted(n) for i, n in around.items()} == {ids[0]: [ids[1]], ids[2]: [ids[1], ids[3]]}


def test_the_turns_said_at_the_time_a_question_names_hold_its_date(db: Database) -> None:
    """ "… in April 2023?": the turns said then (the month, widened by a few days) hold the
    date though their words do not (a turn's lexical key spells its own day, "30 March 2023"),
    so their `held`, which the floor's answer gate reads, counts the date's words; a turn of
    another month holds only the words it says."""
    memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
    for n, text in enumerate(FILLER * 2):
        memory.sync_turn("s0", "user", text, "Cy", f"2022-01-0{n + 1}T09:00:00Z")
    memory.sync_turn("s1", "user", "I painted the lake at sunrise.", "Bo", "2023-03-30T10:00:00Z")
    memory.sync_turn("s2", "user", "I painted the lake at dusk.", "Bo", "2023-09-08T10:00:00Z")
    asked = "Bo painted the lake in April 2023"
    dated = {h.text: h for h in memory.search_turns(asked, 5, mode="lex")}
    assert dated["I painted the lake at sunrise."].held == 1.0
    plain = _with(db, None, replace(TURNS, date_weight=0.0))  # no date key: "april" not held
    undated = {h.text: h for h in plain.search_turns(asked, 5, mode="lex")}
    assert (undated["I painted the lake at sunrise."].held or 0) < 0.9
    assert dated["I painted the lake at dusk."].held == undated["I painted the lake at dusk."].held


SHOW = [  # a LoCoMo exchange (conv-42): the statement names the topic, the reply holds the answer
    (
        "Nate",
        "Hey Joanna, something pretty awesome happened. Last Monday I got to teach people vegan"
        " ice cream recipes on my own cooking show!",
    ),
    (
        "Joanna",
        "Way to go, Nate! Congrats on the cooking show, I'll definitely be tuning in! What's"
        " your favorite dish from the show?",
    ),
    (
        "Nate",
        "Coconut milk ice cream is at the top of my list. It's so smooth and creamy with a"
        " tropical coconut twist.",
    ),
]


def test_a_statement_asked_about_passes_relevance_to_its_reply(app: Tideline, e5: Embedder) -> None:
    """Statement, the other speaker's question, the reply: the statement and the question hold
    the query's words, the reply answers in words of its own; the reply lever puts it first
    (with the bundled model: the lever works on relevance, which reads the cosines)."""
    memory = app.memory
    said = _exchange(memory, SHOW)
    statement, question, reply = (said[text] for _, text in SHOW)
    talk = memory.raw.exchanges_of([statement, question, reply])
    assert talk[statement].reply == (question, reply)
    assert talk[question].reply is None and talk[reply].reply is None
    asked = "What is Nate's favorite dish from the cooking show he hosted?"
    off = _with(app.db, e5, replace(memory.turn_policy, reply_weight=0.0))
    assert off.search_turns(asked, 3)[0].id in (statement, question)  # they hold its words
    hits = memory.search_turns(asked, 3)
    assert hits[0].id == reply and hits[0].lifts["reply"] > 0 and hits[0].score <= 1.0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


MARRIED = [  # a LoCoMo exchange (conv-26): the topic's words, then the number that answers
    ("Melanie", "My husband and I took the kids camping; married life with them is a blast."),
    ("Caroline", "That sounds lovely, Mel!"),
    (
        "Melanie",
        "I'm lucky to have my husband and kids; they keep me motivated. [shares a photo: a photo"
        " of a man and a little girl standing in front of a waterfall]",
    ),
    ("Caroline", "Wow, what an amazing family pic! How long have you been married?"),
    (
        "Melanie",
        "5 years already! Time flies- feels like just yesterday I put this dress on! Thanks,"
        " Caroline!",
    ),
]


def test_a_question_asking_how_long_lifts_the_turn_that_says_a_number(
    app: Tideline, e5: Embedder
) -> None:
    """ "How long …?" is answered by a turn that says a time or a number: the numbers lever
    puts "5 years already!" above the turn that holds the question's words."""
    said = _exchange(app.memory, MARRIED)
    asked = "How long have Mel and her husband been married?"
    policy = replace(app.memory.turn_policy, reply_weight=0.0)  # the number alone lifts it
    plain = _with(app.db, e5, replace(policy, number_weight=0.0))
    assert plain.search_turns(asked, 3)[0].id != said[MARRIED[4][1]]
    numbers = _with(app.db, e5, policy)
    hits = numbers.search_turns(asked, 3)
    assert hits[0].id == said[MARRIED[4][1]] and hits[0].lifts["time or number"] > 0
    # a question that asks for no time or number is not touched
    assert all("time or number" not in h.lifts for h in numbers.search_turns("Is Mel married?", 3))


def test_what_asks_for_a_number_and_what_says_one() -> None:
    from tideline.search._levers import ASKS_NUMBER, says_number

    asks = ["When did Caroline move?", "how many kids?", "Сколько лет Мелани?", "他什么时候搬家的?"]
    assert all(ASKS_NUMBER.search(q) for q in asks)
    assert not any(ASKS_NUMBER.search(q) for q in ["What did Mel say when she left?", "Who?"])
    assert all(says_number(t) for t in ["5 years", "three kids", "last week", "вчера", "两只狗"])
    assert not any(says_number(t) for t in ["Thanks, Mel!", "So cool", ""])
