"""The HTTP side: a down endpoint, rate limits, server errors, timeouts, refusals."""

from __future__ import annotations

import time

import pytest

from tests.llm.conftest import client
from tests.llm_server import Answer, LLMServer, closed_url
from tideline.errors import LLMError, LLMUnavailable
from tideline.llm import STEP_HEADER

HELLO = [{"role": "user", "content": "say hi"}]


def test_free_text_answer_names_model_step_and_usage(server: LLMServer) -> None:
    server.script(Answer("hi there", prompt_tokens=11, completion_tokens=2), step="greet")
    result = client(server.url).complete(HELLO, step="greet")
    assert (result.text, result.data, result.model, result.mode) == (
        "hi there",
        None,
        "scripted-model",
        "text",
    )
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (11, 2)
    sent = server.requests[-1]
    assert sent["headers"][STEP_HEADER] == "greet"
    assert sent["body"]["model"] == "scripted-model" and "response_format" not in sent["body"]


def test_endpoint_down_is_one_transient_line() -> None:
    url = closed_url()
    with pytest.raises(LLMUnavailable) as err:
        client(url, llm_max_retries=2).complete(HELLO, step="greet")
    message = str(err.value)
    assert "\n" not in message and url in message and "after 3 tries" in message
    assert "TIDELINE_LLM_BASE_URL" in message and err.value.transient


def test_429_then_success_waits_retry_after(server: LLMServer) -> None:
    server.fail_next = [429, 429]
    server.fail_headers = {"Retry-After": "0.05"}
    server.script("ok")
    start = time.monotonic()
    # backoff_max bounds even the server's Retry-After: 0.05 s asked, 0.2 s cap
    result = client(server.url, llm_backoff_max=0.2).complete(HELLO, step="greet")
    assert result.text == "ok" and len(server.chats) == 3
    assert time.monotonic() - start >= 0.1


def test_retry_after_is_capped_by_backoff_max(server: LLMServer) -> None:
    server.fail_next = [429]
    server.fail_headers = {"Retry-After": "3600"}
    server.script("ok")
    start = time.monotonic()
    assert client(server.url).complete(HELLO, step="greet").text == "ok"
    assert time.monotonic() - start < 2


def test_5xx_backoff_is_capped(server: LLMServer) -> None:
    server.fail_next = [500, 502, 503, 500, 500]
    server.script("never sent")
    start = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"after 4 tries \(HTTP 500\)") as err:
        client(server.url, llm_max_retries=3).complete(HELLO, step="greet")
    assert "\n" not in str(err.value)
    assert len(server.chats) == 4 and time.monotonic() - start < 2
    assert server.fail_next == [500]


def test_timeout_fails_at_once_without_retry(server: LLMServer) -> None:
    server.delay = 10
    server.script("too late")
    start = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"within 0.3s; raise TIDELINE_LLM_TIMEOUT") as err:
        client(server.url, llm_timeout=0.3).complete(HELLO, step="slow")
    assert "\n" not in str(err.value) and time.monotonic() - start < 5
    assert len(server.chats) == 1


def test_a_refusal_is_not_retried() -> None:
    with LLMServer(api_key="right") as server:
        with pytest.raises(LLMError, match=r"HTTP 401: bad key\); check TIDELINE_LLM_MODEL") as err:
            client(server.url, llm_api_key="wrong").complete(HELLO, step="greet")
        assert len(server.chats) == 1 and "\n" not in str(err.value)
        assert server.requests[0]["auth"] == "Bearer wrong"


def test_a_wrong_base_url_names_the_address_that_answered_404(server: LLMServer) -> None:
    """A base URL without its /v1: the server's 404 page is HTML about nothing we sent; the
    message names the address that answered 404 and the setting, not the model or the key."""
    base = server.url.removesuffix("/v1")
    with pytest.raises(LLMError) as err:
        client(base).complete(HELLO, step="greet")
    message = str(err.value)
    assert f"{base}/chat/completions answered step 'greet' with HTTP 404" in message
    assert "TIDELINE_LLM_BASE_URL" in message and "/v1" in message
    assert "<" not in message and "TIDELINE_LLM_MODEL" not in message and "\n" not in message
    server.only_its_model = True
    with pytest.raises(LLMError, match=r"`gpt-9` does not exist.*check TIDELINE_LLM_MODEL"):
        client(server.url, llm_model="gpt-9").complete(HELLO, step="greet")  # a 404 about the model
