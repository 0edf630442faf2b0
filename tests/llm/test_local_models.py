"""What local model servers do: refuse a structured-output form with a 500, enforce a schema by
grammar, think aloud before answering, have a context window smaller than the prompt."""

from __future__ import annotations

import pytest

from tests.llm.conftest import GOOD, Facts, client
from tests.llm_server import LLMServer
from tideline.errors import InputTooLong
from tideline.llm import JsonSchema

ASK = [
    {"role": "system", "content": "You extract facts about the user."},
    {"role": "user", "content": "I live in Tokyo."},
]


def test_a_500_naming_the_format_steps_down_at_once_and_is_remembered(server: LLMServer) -> None:
    server.reject_json_schema, server.format_status = True, 500  # llama-cpp-python 0.3
    server.script(GOOD, GOOD)
    result = client(server.url, llm_max_retries=4).complete(ASK, schema=Facts, step="extract")
    assert result.data == GOOD and result.mode == "json_object_schema"
    first, second = server.chats
    assert first["response_format"]["type"] == "json_schema"  # asked once, not retried 5 times
    assert second["response_format"] == {
        "type": "json_object",
        "schema": JsonSchema.of(Facts).for_grammar(),
    }
    assert second["messages"] == ASK  # the grammar enforces the schema: not in the prompt
    again = client(server.url).complete(ASK, schema=Facts, step="extract")  # the next run
    assert again.mode == "json_object_schema" and len(server.chats) == 3


def test_a_500_that_does_not_name_the_format_is_retried_as_before(server: LLMServer) -> None:
    server.fail_next = [500, 500]
    server.script(GOOD)
    result = client(server.url).complete(ASK, schema=Facts, step="extract")
    assert result.mode == "json_schema" and len(server.chats) == 3


def test_a_think_block_and_a_fence_around_the_answer_are_read(server: LLMServer) -> None:
    server.script(
        "<think>The user said {Tokyo}; the schema wants facts.</think>\n"
        f"Sure:\n```json\n{GOOD.model_dump_json()}\n```"
    )
    assert client(server.url).complete(ASK, schema=Facts, step="extract").data == GOOD


def test_a_think_block_never_closed_is_a_bad_answer_that_gets_the_repair(
    server: LLMServer,
) -> None:
    server.script('<think>maybe {"facts": []} or', GOOD)
    result = client(server.url).complete(ASK, schema=Facts, step="extract")
    assert result.data == GOOD and result.attempts == 2


def test_a_window_the_server_tells_sizes_the_cap_and_the_answer(server: LLMServer) -> None:
    server.n_ctx, server.tell_window = 2048, True
    llm = client(server.url, llm_max_input_tokens=24000, llm_max_output_tokens=2000)
    cap, answer = llm.limits()
    assert answer == 512 and cap == int(2048 * 0.85) - 512
    room = llm.room(ASK[0]["content"], Facts)
    assert 0 < room < cap - len(JsonSchema.of(Facts).instruction) // 4  # unsettled: schema counted
    server.script(GOOD)
    llm.complete(ASK, schema=Facts, step="extract")
    assert server.chats[0]["max_tokens"] == 512 and "/props" in server.gets
    assert llm.room(ASK[0]["content"], Facts) > room  # json_schema works: the schema is not sent
    with pytest.raises(InputTooLong, match=r"the server's 2048-token context window") as err:
        llm.complete([{"role": "user", "content": "word " * 1200}], step="extract")
    assert "\n" not in str(err.value) and len(server.chats) == 1


def test_a_context_overflow_error_is_one_line_and_teaches_the_window(server: LLMServer) -> None:
    server.n_ctx = 300  # says nothing at /props, like llama-cpp-python
    long = [{"role": "user", "content": "word " * 400}]
    llm = client(server.url, llm_max_output_tokens=100)
    assert llm.limits() == (24000, 100)
    with pytest.raises(InputTooLong) as err:
        llm.complete(long, step="extract")
    message = str(err.value)
    assert "\n" not in message and "its 300-token context window" in message
    assert server.url in message and "--n_ctx" in message and len(server.chats) == 1
    assert client(server.url, llm_max_output_tokens=100).limits() == (int(300 * 0.85) - 75, 75)
