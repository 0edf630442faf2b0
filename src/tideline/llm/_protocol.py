"""The seams: `LLM` is what pipelines call; `ChatBackend` is one raw request to one kind of server.

`LLMClient` is the one `LLM`: it caps the input, checks the run's budget, validates and repairs
structured answers and accounts tokens, for every backend alike. A backend only sends messages
and returns the text (`OpenAIChat` over HTTP, `SamplingChat` through an MCP client's model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, overload

from pydantic import BaseModel

from tideline.llm._messages import Message, Reply, Result

if TYPE_CHECKING:
    from tideline.llm._meter import TokenMeter
    from tideline.llm._structured import JsonSchema

M = TypeVar("M", bound=BaseModel)

NO_LLM = (
    "skipped: no LLM configured (set TIDELINE_LLM_BASE_URL and TIDELINE_LLM_MODEL, "
    "or run it from an MCP client that supports sampling; see docs/llm.md)"
)
"""Why a run had no LLM (the app's `llm` is None without an endpoint): the run says it once."""
NO_LLM_NOTE = "skipped: no LLM"
"""What each LLM step's own line says then (the reason is the run's, said once)."""


class LLM(Protocol):
    """What the sleep and dream pipelines call; `name` is recorded with what each run produced."""

    name: str

    @overload
    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[M],
        step: str,
        max_tokens: int | None = None,
        meter: TokenMeter | None = None,
    ) -> Result[M]: ...

    @overload
    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: None = None,
        step: str,
        max_tokens: int | None = None,
        meter: TokenMeter | None = None,
    ) -> Result[None]: ...

    def room(
        self, system: str, schema: type[BaseModel] | None = None, max_tokens: int | None = None
    ) -> int:
        """Tokens left for the user message of a call with this system prompt and schema."""
        ...


class ChatBackend(Protocol):
    """One request: send the messages, return the raw answer. Retries of transport errors
    belong here; validation and repair do not."""

    name: str

    @property
    def settled(self) -> bool:
        """The structured-output mode is known to work (until then, assume the worst)."""
        ...

    def chat(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        schema: JsonSchema | None,
        step: str,
    ) -> Reply: ...

    def overhead(self, schema: JsonSchema | None) -> int:
        """Estimated tokens the backend may add to the prompt (the schema instruction)."""
        ...

    def window(self) -> int | None:
        """The model's context window in tokens, when the server tells (None: unknown)."""
        ...


@dataclass(frozen=True)
class Sample:
    """An answer of the client's model, as MCP sampling returns it."""

    text: str
    model: str


class Sampler(Protocol):
    """Ask the connected client's model: the core's view of MCP sampling (no SDK types here).

    `messages` hold only user and assistant turns; the system prompt travels separately, as in
    the MCP `sampling/createMessage` request.
    """

    def __call__(
        self, messages: Sequence[Message], *, system: str | None, max_tokens: int
    ) -> Sample: ...
