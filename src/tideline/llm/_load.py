"""Building an `LLMClient` from settings — the only place the `llm_*` settings are read."""

from __future__ import annotations

from tideline.config import Settings
from tideline.llm._client import LLMClient
from tideline.llm._openai import OpenAIChat
from tideline.llm._protocol import Sampler
from tideline.llm._sampling import SamplingChat

NO_LLM = (
    "skipped: no LLM configured (set TIDELINE_LLM_BASE_URL and TIDELINE_LLM_MODEL, "
    "or run it from an MCP client that supports sampling; see docs/llm.md)"
)
"""Why a run had no LLM when `llm_from_settings` returned None: the run says it once."""
NO_LLM_NOTE = "skipped: no LLM"
"""What each LLM step's own line says then (the reason is the run's, said once)."""


def llm_from_settings(settings: Settings) -> LLMClient | None:
    """The configured OpenAI-compatible client, or None: callers then skip with `NO_LLM`."""
    if not settings.llm_base_url:
        return None
    backend = OpenAIChat(
        settings.llm_base_url,
        settings.llm_model,
        settings.llm_api_key,
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        backoff=settings.llm_backoff,
        backoff_max=settings.llm_backoff_max,
        structured=settings.llm_structured,
    )
    return _client(backend, settings)


def llm_from_sampler(sampler: Sampler, settings: Settings) -> LLMClient:
    """A client that asks an MCP client's model, with the same caps as the HTTP one."""
    return _client(SamplingChat(sampler), settings)


def _client(backend: OpenAIChat | SamplingChat, settings: Settings) -> LLMClient:
    return LLMClient(
        backend,
        max_input_tokens=settings.llm_max_input_tokens,
        max_output_tokens=settings.llm_max_output_tokens,
    )
