"""The scripted chat server and settings that point at it, with tiny backoffs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from tests.llm_server import LLMServer
from tideline.app import Tideline
from tideline.config import Settings
from tideline.llm import LLMClient


class Fact(BaseModel):
    subject: Literal["user", "person", "self"]
    value: str
    confidence: float = Field(ge=0, le=1)


class Facts(BaseModel):
    facts: list[Fact]


GOOD = Facts(facts=[Fact(subject="user", value="lives in Tokyo", confidence=0.9)])


@pytest.fixture(autouse=True)
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own TIDELINE_LLM_* must not leak into the tests."""
    for name in ("BASE_URL", "API_KEY", "MODEL", "RUN_BUDGET", "STRUCTURED"):
        monkeypatch.delenv(f"TIDELINE_LLM_{name}", raising=False)


def llm_settings(url: str, **overrides: Any) -> Settings:
    """Settings for a client of `url`: 1 ms backoffs, capped at 10 ms, a 5 s timeout."""
    values = {
        "llm_base_url": url,
        "llm_model": "scripted-model",
        "llm_backoff": 0.001,
        "llm_backoff_max": 0.01,
        "llm_timeout": 5.0,
        **overrides,
    }
    return Settings.load(overrides=values)


def client(url: str, **overrides: Any) -> LLMClient:
    llm = Tideline(llm_settings(url, **overrides)).llm
    assert llm is not None
    return llm


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        yield s
