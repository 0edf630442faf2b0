"""The values that cross the LLM seam: messages in; replies, usage and results out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypedDict, TypeVar

T = TypeVar("T")

Mode = Literal["text", "json_schema", "json_object_schema", "json_object", "prompt"]
"""How an answer was constrained: free text; a schema the server enforces (`json_schema`, or
`json_object` with a `schema`, llama.cpp's grammar); JSON mode with the schema in the prompt; or
the prompt only."""


class Message(TypedDict):
    """One chat message, in the shape every OpenAI-compatible server and MCP sampling accept."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Usage:
    """Tokens of one call or a sum of calls; `estimated` when the backend reported none."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.estimated or other.estimated,
        )


@dataclass(frozen=True)
class Reply:
    """One raw answer from a backend, before any parsing."""

    text: str
    usage: Usage
    model: str
    mode: Mode
    truncated: bool = False  # the answer stopped at max_tokens


@dataclass(frozen=True)
class Result(Generic[T]):
    """What a pipeline step gets back: the validated data (None for free text) and its cost.

    `usage` sums every request the call made (a repair retry included); `attempts` counts the
    answers the model gave (1, or 2 after a repair); `cuts` what was cut to the schema's caps
    (`observations: cut at 50 of 300`).
    """

    data: T
    text: str
    usage: Usage
    model: str
    step: str
    mode: Mode
    attempts: int
    cuts: tuple[str, ...] = ()
