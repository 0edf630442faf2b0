"""Structured answers: schema enforcement or JSON mode, validation, the one repair retry."""

from __future__ import annotations

import pytest

from tests.llm.conftest import GOOD, Facts, client
from tests.llm_server import LLMServer
from tideline.errors import LLMError
from tideline.llm import JsonSchema

ASK = [
    {"role": "system", "content": "You extract facts about the user."},
    {"role": "user", "content": "I live in Tokyo."},
]


def test_json_schema_is_sent_and_the_answer_validated(server: LLMServer) -> None:
    server.script(GOOD, step="extract")
    result = client(server.url).complete(ASK, schema=Facts, step="extract")
    assert result.data == GOOD and (result.mode, result.attempts) == ("json_schema", 1)
    body = server.chats[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == JsonSchema.of(Facts).schema
    assert body["messages"] == ASK  # the server enforces the schema: no instruction in the prompt


def test_code_fence_and_prose_around_the_json_are_tolerated(server: LLMServer) -> None:
    server.script(f"Here you go:\n```json\n{GOOD.model_dump_json()}\n```")
    assert client(server.url).complete(ASK, schema=Facts, step="extract").data == GOOD


def test_malformed_json_is_repaired_with_the_error_sent_back(server: LLMServer) -> None:
    server.script('{"facts": [{"subject": "user", "value": "lives in Tokyo"', GOOD, step="extract")
    result = client(server.url).complete(ASK, schema=Facts, step="extract")
    assert result.data == GOOD and result.attempts == 2 and len(server.chats) == 2
    repair = server.chats[1]["messages"]
    assert repair[: len(ASK)] == ASK
    assert repair[-2] == {
        "role": "assistant",
        "content": '{"facts": [{"subject": "user", "value": "lives in Tokyo"',
    }
    assert "Invalid JSON" in repair[-1]["content"] and repair[-1]["role"] == "user"
    assert result.usage.prompt_tokens > sum(len(m["content"].split()) for m in ASK)


def test_schema_invalid_twice_raises_one_line(server: LLMServer) -> None:
    wrong = {"facts": [{"subject": "the cat", "value": "naps", "confidence": 3}]}
    server.script(wrong, wrong, GOOD, step="extract")
    with pytest.raises(LLMError) as err:
        client(server.url).complete(ASK, schema=Facts, step="extract")
    message = str(err.value)
    assert "\n" not in message and "'extract'" in message and "Facts schema" in message
    assert "facts.0.subject" in message and "facts.0.confidence" in message
    repair = server.chats[1]["messages"][-1]["content"]
    assert "facts.0.subject" in repair and "less than or equal to 1" in repair
    assert len(server.chats) == 2  # exactly one repair


def test_json_schema_unsupported_falls_back_to_json_mode_once(server: LLMServer) -> None:
    server.reject_json_schema = server.reject_object_schema = True
    server.script(GOOD, GOOD, GOOD)
    llm = client(server.url)
    first = llm.complete(ASK, schema=Facts, step="extract")
    second = llm.complete(ASK, schema=Facts, step="extract")
    assert first.data == second.data == GOOD and first.mode == second.mode == "json_object"
    forms = [b["response_format"] for b in server.chats]
    assert [f["type"] for f in forms] == [
        "json_schema",
        "json_object",
        "json_object",
        "json_object",
    ]
    assert "schema" in forms[1] and "schema" not in forms[2]
    system = server.chats[2]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(ASK[0]["content"])
    assert JsonSchema.of(Facts).text in system["content"]
    # remembered for the endpoint: a new client (the next run) starts on the rung that worked
    assert client(server.url).complete(ASK, schema=Facts, step="extract").mode == "json_object"
    assert len(server.chats) == 5


def test_no_json_mode_either_falls_back_to_the_prompt(server: LLMServer) -> None:
    server.reject_json_schema = server.reject_object_schema = server.reject_json_object = True
    server.script(GOOD)
    result = client(server.url).complete(ASK, schema=Facts, step="extract")
    assert result.data == GOOD and result.mode == "prompt"
    assert "response_format" not in server.chats[-1]


def test_a_pinned_mode_does_not_fall_back(server: LLMServer) -> None:
    server.reject_json_schema = True
    with pytest.raises(LLMError, match=r"HTTP 400: response_format type 'json_schema' is not"):
        client(server.url, llm_structured="json_schema").complete(ASK, schema=Facts, step="x")
    server.script(GOOD)
    result = client(server.url, llm_structured="json_object").complete(ASK, schema=Facts, step="x")
    assert result.mode == "json_object" and result.data == GOOD
