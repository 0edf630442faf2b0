"""`llm_from_settings`: None (and the skip reason) without an endpoint; one-line config errors."""

from __future__ import annotations

import pytest

from tests.llm.conftest import llm_settings
from tests.llm_server import LLMServer
from tideline.config import Settings
from tideline.errors import ConfigError
from tideline.llm import NO_LLM, OpenAIChat, llm_from_settings


def test_no_endpoint_means_no_llm_and_a_reason() -> None:
    assert llm_from_settings(Settings.load()) is None
    assert NO_LLM.startswith("skipped: no LLM configured (set TIDELINE_LLM_BASE_URL")
    assert "\n" not in NO_LLM


def test_settings_reach_the_client_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIDELINE_LLM_BASE_URL", "http://127.0.0.1:11434/v1/")
    monkeypatch.setenv("TIDELINE_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("TIDELINE_LLM_MAX_INPUT_TOKENS", "8000")
    monkeypatch.setenv("TIDELINE_LLM_STRUCTURED", "json_object")
    llm = llm_from_settings(Settings.load())
    assert llm is not None and llm.name == "openai:qwen2.5:7b" and llm.max_input_tokens == 8000
    assert isinstance(llm.backend, OpenAIChat)
    assert (llm.backend.url, llm.backend.mode) == ("http://127.0.0.1:11434/v1", "json_object")


def test_a_url_without_a_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TIDELINE_LLM_MODEL") as err:
        llm_from_settings(llm_settings("http://127.0.0.1:1/v1", llm_model=""))
    assert "\n" not in str(err.value)


def test_an_unknown_structured_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TIDELINE_LLM_STRUCTURED must be auto"):
        llm_from_settings(llm_settings("http://127.0.0.1:1/v1", llm_structured="grammar"))


def test_a_missing_key_is_never_read_from_openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    with LLMServer() as server:
        server.script("ok")
        llm = llm_from_settings(llm_settings(server.url))
        assert llm is not None
        llm.complete([{"role": "user", "content": "hi"}], step="greet")
        sent = server.requests[0]
        assert sent["auth"] is None and "sk-real-secret" not in str(sent["headers"])
