"""The LLM client: OpenAI-compatible chat completions and MCP sampling behind one `LLM` protocol.

Structured output validated with pydantic (one repair retry; limits declared once for the schema
and the validation, lists cut to their `Items` caps), bounded retries, answer bodies bounded in
bytes and seconds, an input cap fitted to the server's context window, and token accounting per
call (`Result.usage`) and per run (`TokenMeter`). The composition root (`tideline.app`) builds
the one client of an app from the settings. See docs/llm.md.
"""

from tideline.errors import FormatRefused
from tideline.llm._bounds import Items
from tideline.llm._client import LLMClient, prompt_tokens
from tideline.llm._messages import Message, Mode, Reply, Result, Usage
from tideline.llm._meter import TokenMeter
from tideline.llm._openai_chat import STEP_HEADER, OpenAIChat
from tideline.llm._protocol import (
    LLM,
    NO_LLM,
    NO_LLM_NOTE,
    ChatBackend,
    Sample,
    Sampler,
)
from tideline.llm._sampling_chat import SamplingChat
from tideline.llm._structured import JsonSchema

__all__ = [
    "LLM",
    "NO_LLM",
    "NO_LLM_NOTE",
    "STEP_HEADER",
    "ChatBackend",
    "FormatRefused",
    "Items",
    "JsonSchema",
    "LLMClient",
    "Message",
    "Mode",
    "OpenAIChat",
    "Reply",
    "Result",
    "Sample",
    "Sampler",
    "SamplingChat",
    "TokenMeter",
    "Usage",
    "prompt_tokens",
]
