"""Shared pieces of the fuzz suite: the hypothesis profile, the one assertion, real stores.

Every test here feeds generated input to a public entry point and asserts one thing: the call
succeeds or raises a `TidelineError` whose message is one line. Anything else (a traceback, an
`OverflowError`, a `UnicodeEncodeError`) fails the test with hypothesis's smallest example.

Budget: CI runs each test with its own example count (the `examples` argument of `fuzz`, about
11,000 in total, well under a minute on the `none` embedder). By hand, set
`TIDELINE_FUZZ_EXAMPLES=100000` to run that many examples per test.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.library.corpus import build
from tideline.app import Tideline, library_from
from tideline.config import DEFAULTS, Settings
from tideline.errors import TidelineError
from tideline.library import Library

F = TypeVar("F", bound=Callable[..., Any])

#: Examples per test when run by hand; 0 means each test's CI count.
BY_HAND = int(os.environ.get("TIDELINE_FUZZ_EXAMPLES", "0") or 0)

settings.register_profile(
    "tideline-fuzz",
    deadline=None,  # a first call may load jieba or build an index; time is bounded by counts
    derandomize=BY_HAND == 0,  # CI runs the same examples every time; by hand, new ones
    database=None,
    # The stores are module-scoped; the autouse `isolated_home` fixture is not used by the body.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def fuzz(examples: int) -> Callable[[F], F]:
    """Run with `examples` examples in CI, `TIDELINE_FUZZ_EXAMPLES` when set."""
    return settings(settings.get_profile("tideline-fuzz"), max_examples=BY_HAND or examples)


def only_tideline_errors(call: Callable[[], object]) -> None:
    """The property: success, or a `TidelineError` with a one-line message."""
    try:
        call()
    except TidelineError as exc:
        message = str(exc)
        assert message.strip(), f"{type(exc).__name__} with an empty message"
        assert "\n" not in message and "\r" not in message, message


# -- strategies -------------------------------------------------------------------------------
#: Any code point, lone surrogates included (hypothesis leaves them out by default).
any_char = st.characters(exclude_categories=())
#: What a shell hands over for bytes that are not UTF-8: `surrogateescape` text.
argv_text = st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape"))
#: Pieces that mean something to FTS5, the query parser or a person typing.
syntax = st.sampled_from(
    [
        '"',
        "*",
        "-",
        "--",
        ":",
        "(",
        ")",
        "NEAR",
        "AND",
        "OR",
        "NOT",
        "^",
        "{",
        "}",
        "[",
        "]",
        "'",
        ",",
        ";",
        "\\",
        "\x00",
        "\ud800",
        "\udcff",
        "\ufffd",
        "tar",
        "Anna",
        "安娜",
        " ",
        "\n",
        "database",
        "pg_restore",
        "4711",
        "🙂",
        "e\u0301",
        "ﬁ",
    ]
)
query_text = st.one_of(
    st.text(any_char, max_size=60),
    argv_text,
    st.lists(st.one_of(syntax, st.text(any_char, max_size=6)), max_size=12).map("".join),
)


# -- real stores (module scope: built once, searched thousands of times) ----------------------
@pytest.fixture(scope="module")
def agent() -> Iterator[Tideline]:
    """A small agent memory on a real SQLite file, embedder `none` (search is lexical)."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        app = Tideline(
            Settings.load(
                env={}, overrides={"home": str(home), "agent_name": "fuzz", "embedder": "none"}
            )
        )
        m = app.memory
        for i, text in enumerate(
            [
                "I booked the flight to Lisbon to see Anna.",
                "tar xzf backup.tgz restored the 数据库",
                "the pg_restore --clean run took 4711 s",
                "Anna's garden: tomatoes and basil",
            ]
        ):
            turn = m.sync_turn("s1", "user", text, speaker="Kai", timestamp=f"2026-05-0{i + 1}")
            m.write(gesture=text, tags=["trip" if i % 2 else "work"], source_links=[turn.id])
        yield app
        app.close()


@pytest.fixture(scope="module")
def library() -> Iterator[Library]:
    """The library test corpus, indexed, no embedder."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lib"
        root.mkdir()
        build(root)
        lib = library_from(DEFAULTS, root, None)
        lib.index()
        yield lib
        lib.close()
