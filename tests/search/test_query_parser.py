"""The query parser: no user text may raise an FTS5 error, and a present word is still found."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tideline.search import TextIndex, parse_query
from tideline.store import open_database

NASTY = [
    '"',
    '""',
    '"unbalanced',
    "a AND",
    "OR OR",
    "NOT",
    "NEAR(a b",
    "NEAR(a, b, 3)",
    "col:value",
    "text:hello",
    "title: x",
    "*",
    "a*",
    "**",
    "-",
    "--",
    "-word",
    "-(",
    "(((",
    ")))",
    "a) OR (b",
    "^start",
    "😀🔥",
    "привет мир",
    "我们的边界",
    "mixed 中文 и русский text",
    "\x00nul",
    "a\u200bb",
    "{x y}",
    "[a]",
    "a + b",
    "'single'",
    "a'b",
    "café",
    "x" * 5000,
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> TextIndex:
    db = open_database(Path(tmp_path_factory.mktemp("q")) / "q.db")
    idx = TextIndex(db, "docs")
    idx.upsert_many(
        [
            (1, "hello world café AND NEAR text"),
            (2, "привет мир, москва"),
            (3, "我们讨论了边界问题和拒绝"),
            (4, "whale-listen is a single word"),
        ]
    )
    return idx


@pytest.mark.parametrize("text", NASTY)
def test_nasty_inputs_never_raise(index: TextIndex, text: str) -> None:
    index.lexical(text, 10)


def test_syntax_is_neutralised() -> None:
    q = parse_query('text:hello NEAR(a b) "x y" -zzz pre*')
    assert q.match is not None
    assert '"text:hello"' in q.match  # a column-like word is a phrase, never a column filter
    assert '"x y"' in q.match and '"pre"*' in q.match and "NOT" in q.match


def test_only_negative_or_only_symbols_is_empty() -> None:
    assert parse_query("-alone").empty
    assert parse_query("😀 -- ** ()").empty
    assert parse_query("").empty


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("hello", 1),
        ("cafe", 1),
        ("Москва", 2),
        ("边界", 3),
        ("拒绝", 3),
        ("whale-listen", 4),
        ("whale", 4),
        ("listen", 4),
    ],
)
def test_words_find_their_document(index: TextIndex, query: str, expected: int) -> None:
    assert index.lexical(query, 5)[0].id == expected


def test_negation_excludes(index: TextIndex) -> None:
    assert {h.id for h in index.lexical("hello OR whale -listen", 10)} == {1}


def test_substring_falls_back_to_trigram(index: TextIndex) -> None:
    hits = index.lexical("ale-lis", 5)
    assert hits[0].id == 4 and hits[0].lex_source == "trigram"


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=80))
def test_random_unicode_never_raises(index: TextIndex, text: str) -> None:
    index.lexical(text, 5)


_unicode61 = apsw.Connection(":memory:").fts5_tokenizer("unicode61", ["remove_diacritics", "2"])


def _one_token(word: str) -> bool:
    """FTS5's unicode61 knows Unicode 6.1: a letter categorised later (e.g. U+19C8) is a separator
    to it, so such a word is no token at all and cannot be found by words (a known limit)."""
    return len(_unicode61(word.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)) == 1


_word = st.text(
    alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Lo", "Nd")), min_size=1, max_size=12
).filter(_one_token)


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(_word, min_size=1, max_size=6),
    pick=st.integers(min_value=0, max_value=5),
    noise=st.text(max_size=20),
)
def test_a_word_of_the_document_finds_it(
    words: list[str], pick: int, noise: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = open_database(Path(tmp_path_factory.mktemp("p")) / "p.db")
    idx = TextIndex(db, "docs")
    idx.upsert_many([(1, " ".join(words)), (2, "unrelated filler sentence")])
    word = words[pick % len(words)]
    query = f"{noise.replace(chr(34), '')} {word}"  # an open quote in the noise makes a phrase
    assume("NOT" not in (parse_query(query).match or ""))  # noise like "-w" may exclude it
    assert 1 in {h.id for h in idx.lexical(query, 10)}
    db.close()


def test_double_dash_options_are_words_not_exclusions(index: TextIndex) -> None:
    q = parse_query("tar --wildcards -zzz")
    assert q.match is not None and '"--wildcards"' in q.match and "NOT" in q.match
    assert "wildcards" in q.words


def test_migrations_skip_a_step_another_process_applied(tmp_path: Path) -> None:
    from tideline.store import Migrations

    m = Migrations("race")

    @m.step(1)
    def _one(db) -> None:  # type: ignore[no-untyped-def]
        db.execute("CREATE TABLE t(x)")

    first = open_database(tmp_path / "r.db")
    second = open_database(tmp_path / "r.db")
    assert m.pending(first) == [1] and m.pending(second) == [1]  # both saw it pending
    assert m.apply(first) == [1]
    assert m.apply(second) == []  # re-checked inside its transaction: no "table already exists"
