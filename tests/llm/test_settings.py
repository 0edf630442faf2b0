"""`Tideline.llm`: None (and the skip reason) without an endpoint; one-line config errors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.llm.conftest import llm_settings
from tests.llm_server import LLMServer
from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import ConfigError
from tideline.llm import NO_LLM, Message, OpenAIChat, Sample, SamplingChat


def test_no_endpoint_means_no_llm_and_a_reason() -> None:
    assert Tideline(Settings.load()).llm is None
    assert NO_LLM.startswith("skipped: no LLM configured (set TIDELINE_LLM_BASE_URL")
    assert "\n" not in NO_LLM


def test_settings_reach_the_client_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIDELINE_LLM_BASE_URL", "http://127.0.0.1:11434/v1/")
    monkeypatch.setenv("TIDELINE_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("TIDELINE_LLM_MAX_INPUT_TOKENS", "8000")
    monkeypatch.setenv("TIDELINE_LLM_STRUCTURED", "json_object")
    llm = Tideline(Settings.load()).llm
    assert llm is not None and llm.name == "openai:qwen2.5:7b" and llm.max_input_tokens == 8000
    assert isinstance(llm.backend, OpenAIChat)
    assert (llm.backend.url, llm.backend.mode) == ("http://127.0.0.1:11434/v1", "json_object")


def test_a_url_without_a_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TIDELINE_LLM_MODEL") as err:
        _ = Tideline(llm_settings("http://127.0.0.1:1/v1", llm_model="")).llm
    assert "\n" not in str(err.value)


def test_an_unknown_structured_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TIDELINE_LLM_STRUCTURED must be auto"):
        _ = Tideline(llm_settings("http://127.0.0.1:1/v1", llm_structured="grammar")).llm


def test_a_missing_key_is_never_read_from_openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret")
    with LLMServer() as server:
        server.script("ok")
        llm = Tideline(llm_settings(server.url)).llm
        assert llm is not None
        llm.complete([{"role": "user", "content": "hi"}], step="greet")
        sent = server.requests[0]
        assert sent["auth"] is None and "sk-real-secret" not in str(sent["headers"])


def _sampler(messages: Sequence[Message], *, system: str | None, max_tokens: int) -> Sample:
    return Sample("hi", "client-model")


def test_an_app_has_one_llm_client_and_its_endpoint_wins_over_sampling(tmp_path: Path) -> None:
    app = Tideline(llm_settings("http://127.0.0.1:1/v1", home=str(tmp_path / "a"), embedder="none"))
    try:
        llm = app.llm
        assert llm is not None and isinstance(llm.backend, OpenAIChat)
        assert app.sleep.llm is llm and app.dream.llm is llm and app.session_memory.llm is llm
        assert app.llm_for(_sampler) is llm  # the endpoint the user configured, not the client's
    finally:
        app.close()
    bare = Tideline(Settings.load(overrides={"home": str(tmp_path / "b"), "embedder": "none"}))
    sampled = bare.llm_for(_sampler)
    assert sampled is not None and isinstance(sampled.backend, SamplingChat)
    assert (sampled.max_input_tokens, sampled.max_output_tokens) == (24000, 2000)
    assert bare.llm is None and bare.llm_for(None) is None
