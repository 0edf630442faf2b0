"""Tokens per call and per run, the run's budget, the input cap."""

from __future__ import annotations

import pytest

from tests.llm.conftest import GOOD, Facts, client, llm_settings
from tests.llm_server import Answer, LLMServer
from tideline.errors import BudgetExceeded, InputTooLong
from tideline.llm import TokenMeter, Usage, prompt_tokens

ASK = [{"role": "user", "content": "I live in Tokyo."}]


def test_usage_per_call_and_per_step(server: LLMServer) -> None:
    server.script(Answer(GOOD.model_dump_json(), 100, 20), step="extract")
    server.script(
        Answer("{broken", 100, 5), Answer(GOOD.model_dump_json(), 130, 20), step="arbitrate"
    )
    server.script(Answer("fine", 40, 3), step="extract")
    llm, meter = client(server.url), TokenMeter()
    one = llm.complete(ASK, schema=Facts, step="extract", meter=meter)
    two = llm.complete(ASK, schema=Facts, step="arbitrate", meter=meter)
    llm.complete(ASK, step="extract", meter=meter)
    assert one.usage == Usage(100, 20)
    assert two.usage == Usage(230, 25) and two.attempts == 2  # the repair is counted too
    assert meter.steps == {"extract": Usage(140, 23), "arbitrate": Usage(230, 25)}
    assert meter.total == Usage(370, 48) and meter.calls == 4
    assert meter.summary() == {
        "calls": 4,
        "prompt_tokens": 370,
        "completion_tokens": 48,
        "total_tokens": 418,
        "estimated": False,
        "budget": None,
        "max_calls": None,
        "steps": {
            "extract": {"prompt_tokens": 140, "completion_tokens": 23},
            "arbitrate": {"prompt_tokens": 230, "completion_tokens": 25},
        },
    }


def test_budget_stops_before_the_call_that_would_exceed_it(server: LLMServer) -> None:
    server.script(Answer("first", 300, 50), Answer("second", 300, 50))
    llm, meter = client(server.url), TokenMeter(budget=600)
    llm.complete(ASK, step="extract", max_tokens=100, meter=meter)  # worst case fits: 350 spent
    with pytest.raises(BudgetExceeded) as err:  # 350 + prompt + 300 > 600
        llm.complete(ASK, step="extract", max_tokens=300, meter=meter)
    message = str(err.value)
    assert "\n" not in message and "250 of its 600-token budget left" in message
    assert "TIDELINE_LLM_RUN_BUDGET" in message
    assert len(server.chats) == 1 and meter.total == Usage(300, 50)


def test_budget_from_settings_is_the_runs_to_use(server: LLMServer) -> None:
    settings = llm_settings(server.url, llm_run_budget=50, llm_max_output_tokens=64)
    with pytest.raises(BudgetExceeded):
        client(server.url).complete(ASK, step="x", meter=TokenMeter(settings.llm_run_budget))
    assert not server.chats


def test_input_cap_refuses_before_sending(server: LLMServer) -> None:
    long = [{"role": "user", "content": "word " * 500}]
    assert prompt_tokens(long) > 100
    with pytest.raises(InputTooLong) as err:
        client(server.url, llm_max_input_tokens=100).complete(long, step="extract")
    message = str(err.value)
    assert "\n" not in message and "over the 100-token input cap" in message
    assert "TIDELINE_LLM_MAX_INPUT_TOKENS" in message and not server.chats


def test_input_cap_counts_the_schema_instruction_in_json_mode(server: LLMServer) -> None:
    server.reject_json_schema = server.reject_object_schema = True
    server.script(GOOD)
    llm = client(server.url, llm_max_input_tokens=60)
    with pytest.raises(InputTooLong):  # the schema text pushes the prompt over the cap
        llm.complete(ASK, schema=Facts, step="extract")
    assert [b["response_format"]["type"] for b in server.chats] == ["json_schema", "json_object"]
