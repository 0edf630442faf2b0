"""Every query entry point, fed generated text: success or one-line `TidelineError`, nothing else."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import any_char, argv_text, fuzz, only_tideline_errors, query_text
from tideline.app import Tideline, inject_config
from tideline.clock import parse_time
from tideline.errors import InvalidInput
from tideline.inject import MemoryProvider
from tideline.library import Library
from tideline.search import parse_query

#: Times near the ends of the calendar, zones that push them past it, and text that is not a time.
time_text = st.one_of(
    st.none(),
    st.datetimes().map(lambda d: d.isoformat()),
    st.builds(
        lambda d, h, m, sign: f"{d.isoformat()}T00:00:00{sign}{h:02d}:{m:02d}",
        st.dates(),
        st.integers(0, 23),
        st.integers(0, 59),
        st.sampled_from("+-"),
    ),
    st.sampled_from(["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-01:00", "9999-12-31", "Z"]),
    st.text(any_char, max_size=30),
    argv_text,
)


@fuzz(3000)
@given(query_text)
def test_query_parser(text: str) -> None:
    parsed = parse_query(text)  # documented never to raise
    for part in (parsed.match, parsed.trigram, parsed.trigram_all, *parsed.verbatim):
        if part is not None:
            part.encode("utf-8")  # what SQLite will be handed


@fuzz(1500)
@given(time_text, st.booleans())
def test_time_filters(value: str | None, end_of_day: bool) -> None:
    only_tideline_errors(lambda: parse_time(value, "since", end_of_day=end_of_day))


@fuzz(2500)
@given(
    query_text,
    st.sampled_from(["hybrid", "lex", "vec"]),
    st.booleans(),
    st.one_of(st.none(), st.lists(st.one_of(st.text(any_char, max_size=8), argv_text), max_size=3)),
    st.one_of(st.none(), time_text),
    st.one_of(st.none(), st.floats(allow_nan=True), st.integers()),
)
def test_memory_search(
    agent: Tideline,
    query: str,
    mode: str,
    turns: bool,
    tags: list[str] | None,
    since: str | None,
    min_weight: float | None,
) -> None:
    only_tideline_errors(
        lambda: agent.memory.search(
            query, 5, mode=mode, include_turns=turns, tags=tags, since=since, min_weight=min_weight
        )
    )


@fuzz(1000)
@given(
    query_text,
    st.one_of(
        st.sampled_from(["*", "infra", "infra/runbook.md", ".", "", "../x", "~nobody/x"]),
        st.text(any_char, max_size=20),
        argv_text,
        st.integers(250, 5000).map(lambda n: "a" * n),
    ),
    st.sampled_from(["hybrid", "lex", "vec"]),
)
def test_library_search(library: Library, query: str, path: str, mode: str) -> None:
    only_tideline_errors(lambda: library.search(query, path, k=5, mode=mode))


@fuzz(400)
@given(query_text)
def test_inject_prefetch(agent: Tideline, message: str) -> None:
    provider = MemoryProvider(agent.memory, inject_config(agent.settings))
    block = provider.prefetch_block(message)  # the hook must always produce a block
    block.text.encode("utf-8")


@fuzz(600)
@given(
    st.one_of(st.integers(), st.integers(min_value=2**62)),
    st.lists(st.integers(min_value=-(2**70), max_value=2**70), min_size=1, max_size=3),
)
def test_ids(agent: Tideline, narrative_id: int, links: list[int]) -> None:
    only_tideline_errors(lambda: agent.memory.trace(narrative_id))
    try:
        agent.memory.write(gesture="checking links", source_links=links)
    except InvalidInput as exc:
        assert "\n" not in str(exc)
    else:
        assert all(0 < i < 2**63 for i in links)  # only real turns can be linked
