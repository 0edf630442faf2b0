"""Structured output shared by every backend: the schema, its prompt, parsing and the repair.

Servers differ in how much they enforce (a JSON schema, JSON mode, nothing at all; MCP sampling
has no JSON mode), so the answer is always validated here with pydantic, whatever the server
promised. The schema goes into the prompt only when the server does not enforce it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tideline.llm._types import Message

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class JsonSchema:
    """A pydantic model as the wire needs it: a name, the JSON schema, the prompt instruction."""

    name: str
    schema: dict[str, Any]

    @classmethod
    def of(cls, model: type[BaseModel]) -> JsonSchema:
        return cls(model.__name__, model.model_json_schema())

    @property
    def instruction(self) -> str:
        return (
            "Answer with one JSON object and nothing else (no prose, no code fence). "
            f"It must validate against this JSON schema:\n{json.dumps(self.schema)}"
        )

    def response_format(self) -> dict[str, Any]:
        """The OpenAI `response_format` for servers that enforce a schema."""
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema}}


def with_instruction(messages: Sequence[Message], schema: JsonSchema) -> list[Message]:
    """The messages with the schema instruction appended to the system message (added if none)."""
    out = list(messages)
    for i, message in enumerate(out):
        if message["role"] == "system":
            out[i] = {"role": "system", "content": f"{message['content']}\n\n{schema.instruction}"}
            return out
    return [{"role": "system", "content": schema.instruction}, *out]


def parse(text: str, model: type[M]) -> M:
    """Validate an answer; tolerate a code fence or prose around the one JSON object."""
    return model.model_validate_json(_json_part(text))


def _json_part(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    start, end = body.find("{"), body.rfind("}")
    return body[start : end + 1] if 0 <= start < end else body


def describe(exc: ValidationError, limit: int = 400) -> str:
    """A pydantic error as one short line the model (and a person) can act on."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "the answer"
        parts.append(f"{where}: {err['msg']}")
    line = " ".join("; ".join(parts).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def repair_request(problem: str, schema: JsonSchema) -> Message:
    """The follow-up that sends the validation error back for the one repair attempt."""
    return {
        "role": "user",
        "content": (
            f"Your answer was not valid: {problem}. Reply again with only the corrected JSON "
            f"object; it must validate against this JSON schema:\n{json.dumps(schema.schema)}"
        ),
    }
