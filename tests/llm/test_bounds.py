"""What the LLM returns is bounded: body size and time before parsing, items by the schema's caps,
strings by limits the model is shown; each failure one line naming endpoint, step and fix."""

from __future__ import annotations

import json
import time
import tracemalloc
from typing import Annotated

import pytest
from pydantic import BaseModel, Field

from tests.hostile_llm import HostileServer
from tests.llm.conftest import GOOD, Facts, client
from tests.llm_server import Answer, LLMServer
from tideline.errors import LLMError, LLMUnavailable
from tideline.llm import Items, JsonSchema

ASK = [{"role": "user", "content": "I live in Tokyo."}]


class Note(BaseModel):
    topic: str = Field("", max_length=200)
    turns: Annotated[list[int], Items(5)] = []


class Notes(BaseModel):
    notes: Annotated[list[Note], Items(50)] = []


def test_every_limit_is_in_the_schema_the_model_sees() -> None:
    wire = JsonSchema.of(Notes)
    note = wire.schema["$defs"]["Note"]["properties"]
    assert note["topic"]["maxLength"] == 200 and note["turns"]["maxItems"] == 5
    assert wire.schema["properties"]["notes"]["maxItems"] == 50
    assert '"maxLength":200' in wire.instruction and '"title":"Topic"' not in wire.text
    assert wire.text.startswith('{"title":"Notes"')


def test_a_string_over_its_limit_gets_the_one_repair(server: LLMServer) -> None:
    server.script({"notes": [{"topic": "t" * 231}]}, {"notes": [{"topic": "adoption"}]})
    result = client(server.url).complete(ASK, schema=Notes, step="extract")
    assert result.data.notes[0].topic == "adoption" and result.attempts == 2
    repair = server.chats[1]["messages"][-1]["content"]
    assert "notes.0.topic: String should have at most 200 characters" in repair


class Person(BaseModel):
    name: str = Field(min_length=1, max_length=20)
    status: str | None = Field(None, max_length=10)


class Seen(BaseModel):
    notes: Annotated[list[Note], Items(3)] = []
    people: list[Person] = []


def test_a_string_still_too_long_after_the_repair_is_cut_with_a_record(
    server: LLMServer,
) -> None:
    """A looping field (a 1 MB topic, twice) must not fail the step: it is cut to its limit,
    the rest of the answer kept, and the cut said — list cuts are said once, not twice."""
    looping = {
        "notes": [{"topic": "adoption"}, {"topic": "x" * 1_048_576}, *({"topic": "ok"},) * 3],
        "people": [{"name": "Caroline", "status": "s" * 11}],
    }
    server.script(looping, looping)
    result = client(server.url).complete(ASK, schema=Seen, step="extract")
    assert result.attempts == 2
    assert [len(n.topic) for n in result.data.notes] == [8, 200, 2]
    assert result.data.people[0].status == "s" * 10  # through `str | None`
    assert result.cuts == (
        "notes: cut at 3 of 5",
        "notes.1.topic: cut at 200 of 1048576 characters",
        "people.0.status: cut at 10 of 11 characters",
    )


def test_a_repaired_answer_wrong_in_more_than_length_still_fails(server: LLMServer) -> None:
    wrong = {"notes": [{"topic": "x" * 500}], "people": [{"name": ""}]}
    server.script(wrong, wrong)
    with pytest.raises(LLMError, match=r"answered twice .*people\.0\.name"):
        client(server.url).complete(ASK, schema=Seen, step="extract")


def test_items_over_the_cap_are_cut_and_recorded_not_failed(server: LLMServer) -> None:
    many = {"notes": [{"topic": f"t{i}", "turns": list(range(1, 9))} for i in range(10_000)]}
    server.script(many)
    start = time.monotonic()
    result = client(server.url).complete(ASK, schema=Notes, step="extract")
    assert len(result.data.notes) == 50 and all(len(n.turns) == 5 for n in result.data.notes)
    assert result.attempts == 1 and time.monotonic() - start < 5
    assert result.cuts[0] == "notes: cut at 50 of 10000"
    assert result.cuts.count("turns: cut at 5 of 8") == 50


def test_a_huge_wrong_answer_is_not_sent_back_whole_with_the_repair(server: LLMServer) -> None:
    server.script("x" * 1_500_000, GOOD)
    result = client(server.url).complete(ASK, schema=Facts, step="extract")
    assert result.data == GOOD
    echoed = server.chats[1]["messages"][-2]["content"]
    assert len(echoed) < 5000 and "the answer had 1,500,000 characters" in echoed


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("body_50mb", r"answered step 'extract' with a body over 2,097,152 bytes"),
        ("truncated_json", r"failed step 'extract' after 2 tries \(the answer body was not"),
        ("cut_connection", r"failed step 'extract' after 2 tries \(connection failed"),
        ("endless", r"did not answer step 'extract' within 1s"),
    ],
)
def test_hostile_bodies_fail_in_one_line_bounded_in_time_and_memory(
    kind: str, expected: str
) -> None:
    with HostileServer(kind) as server:  # type: ignore[arg-type]
        llm = client(server.url, llm_max_retries=1, llm_timeout=1.0)
        tracemalloc.start()
        start = time.monotonic()
        with pytest.raises((LLMError, LLMUnavailable), match=expected) as err:
            llm.complete(ASK, schema=Facts, step="extract")
        seconds = time.monotonic() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    message = str(err.value)
    assert "\n" not in message and server.url in message and "JSONDecodeError" not in message
    assert "prompt is" not in message  # a huge answer is not mistaken for a huge prompt
    assert seconds < 6 and peak < 24 * 1024 * 1024, (seconds, peak)


def test_absurd_usage_counts_are_estimated_not_believed(server: LLMServer) -> None:
    server.script(Answer(GOOD.model_dump_json(), prompt_tokens=-5, completion_tokens=10**15))
    result = client(server.url).complete(ASK, schema=Facts, step="extract")
    assert result.usage.estimated and result.usage.completion_tokens < 100


def test_a_body_that_is_json_but_not_a_completion_names_the_endpoint(server: LLMServer) -> None:
    server.script(Answer("", raw=json.dumps({"choices": "none"}).encode()))
    with pytest.raises(LLMError, match=r"answered step 'extract' without a message") as err:
        client(server.url).complete(ASK, schema=Facts, step="extract")
    assert server.url in str(err.value)
