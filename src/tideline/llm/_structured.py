"""Structured output shared by every backend: the schema, its prompt, parsing and the repair.

Servers differ in how much they enforce (a JSON schema, a grammar, JSON mode, nothing at all; MCP
sampling has no JSON mode), so the answer is always validated here with pydantic, whatever the
server promised. The schema goes into the prompt only when the server does not enforce it, in
compact form (no titles, no spaces): a small model's context window is small.

Local models have habits the parser forgives: a `<think>…</think>` block before the answer, the
JSON inside a code fence, a sentence around it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tideline.llm._bounds import CUTS
from tideline.llm._messages import Message

M = TypeVar("M", bound=BaseModel)
_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
REPAIR_ECHO = 4000  # characters of a wrong answer sent back with the repair request
# llama.cpp's grammar builders spell `maxLength: n` as n nested optional characters, and a
# depth past ~1,000 crashes llama-cpp-python's server (0.3.36: "failed to parse grammar", then
# the process dies). A grammar gets only the bounds it can hold; the answer is still validated
# against all of them, and a repair request shows them.
GRAMMAR_MAX_REPEAT = 256


@dataclass(frozen=True)
class JsonSchema:
    """A pydantic model as the wire needs it: a name, the JSON schema, the prompt instruction."""

    name: str
    schema: dict[str, Any]

    @classmethod
    def of(cls, model: type[BaseModel]) -> JsonSchema:
        full = model.model_json_schema()
        return cls(model.__name__, {"title": full.get("title", model.__name__), **_untitled(full)})

    @property
    def text(self) -> str:
        return json.dumps(self.schema, separators=(",", ":"), ensure_ascii=False)

    @property
    def instruction(self) -> str:
        return (
            "Answer with one JSON object and nothing else (no prose, no code fence). "
            f"It must validate against this JSON schema:\n{self.text}"
        )

    def response_format(self) -> dict[str, Any]:
        """The OpenAI `response_format` for servers that enforce a schema."""
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema}}

    def for_grammar(self) -> dict[str, Any]:
        """The schema without repetition bounds too deep for a grammar (see GRAMMAR_MAX_REPEAT)."""
        shallow: dict[str, Any] = _shallow(self.schema)
        return shallow


def _shallow(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: _shallow(v)
            for k, v in node.items()
            if not (
                k in ("maxLength", "maxItems") and isinstance(v, int) and v > GRAMMAR_MAX_REPEAT
            )
        }
    if isinstance(node, list):
        return [_shallow(v) for v in node]
    return node


def _untitled(node: Any, properties: bool = False) -> Any:
    """The schema without pydantic's `title` annotations (a field named `title` stays; the
    caller keeps the root's, the answer's name)."""
    if isinstance(node, dict):
        return {
            k: _untitled(v, k == "properties" and not properties)
            for k, v in node.items()
            if properties or k != "title" or not isinstance(v, str)
        }
    if isinstance(node, list):
        return [_untitled(v) for v in node]
    return node


def with_instruction(messages: Sequence[Message], schema: JsonSchema) -> list[Message]:
    """The messages with the schema instruction appended to the system message (added if none)."""
    out = list(messages)
    for i, message in enumerate(out):
        if message["role"] == "system":
            out[i] = {"role": "system", "content": f"{message['content']}\n\n{schema.instruction}"}
            return out
    return [{"role": "system", "content": schema.instruction}, *out]


def parse(text: str, model: type[M], cuts: list[str] | None = None) -> M:
    """Validate an answer; tolerate a think block, a code fence or prose around the one JSON
    object. Lists over their `Items` cap are cut, and each cut appended to `cuts`."""
    return model.model_validate_json(
        json_part(text), context={CUTS: cuts if cuts is not None else []}
    )


def parse_cutting_strings(text: str, model: type[M], cuts: list[str]) -> M:
    """`parse`, once a repaired answer still fails: strings over their `maxLength` are cut to it
    (one looping field — a 1 MB topic — must not cost a night's extraction), each cut appended
    to `cuts` ("observations.0.topic: cut at 200 of 1048576 characters"). Raises the
    ValidationError when anything else is wrong, or the answer has none to cut."""
    before = len(cuts)
    try:
        return parse(text, model, cuts)
    except ValidationError as exc:
        del cuts[before:]  # the lists cut on the way are cut again below
        errors = exc.errors(include_url=False)
        limits = [(e.get("ctx") or {}).get("max_length") for e in errors]
        if any(e["type"] != "string_too_long" for e in errors) or None in limits:
            raise
        answer = json.loads(json_part(text))  # valid JSON: pydantic got as far as the strings
        found = [_cut(answer, e["loc"], int(n or 0)) for e, n in zip(errors, limits, strict=True)]
        if not all(found):
            raise
        validated = model.model_validate(answer, context={CUTS: cuts})
        cuts += [c for c in found if c]
        return validated


def _cut(answer: Any, loc: tuple[int | str, ...], limit: int) -> str | None:
    """Cut the string at `loc` (pydantic's path; a union's branch names are not keys) to
    `limit` characters; what was cut, or None when the path leads to no over-long string."""
    parent, key, node, path = None, None, answer, []
    for part in loc:
        keyed = isinstance(node, dict) and isinstance(part, str) and part in node
        indexed = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (keyed or indexed):
            continue  # a branch of a union (`str` of `str | None`), not a place in the answer
        parent, key, node = node, part, node[part]
        path.append(str(part))
    if parent is None or not isinstance(node, str) or len(node) <= limit:
        return None
    parent[key] = node[:limit]
    return f"{'.'.join(path)}: cut at {limit} of {len(node)} characters"


def json_part(text: str) -> str:
    """The JSON object inside an answer: after any reasoning block, inside any fence."""
    body = _THINK.sub("", text)
    if _OPEN_THINK.search(body):  # a reasoning block never closed: no answer followed it
        return ""
    body = body.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    start, end = body.find("{"), body.rfind("}")
    return body[start : end + 1] if 0 <= start < end else body


def describe(exc: ValidationError, limit: int = 400) -> str:
    """A pydantic error as one short line the model (and a person) can act on."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False)[:20]:
        where = ".".join(str(p) for p in err["loc"]) or "the answer"
        parts.append(f"{where}: {err['msg']}")
    line = " ".join("; ".join(parts).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def echo(answer: str) -> str:
    """A wrong answer as the repair request repeats it: a huge one is cut, not sent back whole."""
    if len(answer) <= REPAIR_ECHO:
        return answer
    return f"{answer[:REPAIR_ECHO]} … [cut: the answer had {len(answer):,} characters]"


def repair_request(problem: str, schema: JsonSchema) -> Message:
    """The follow-up that sends the validation error back for the one repair attempt."""
    return {
        "role": "user",
        "content": (
            f"Your answer was not valid: {problem}. Reply again with only the corrected JSON "
            f"object; it must validate against this JSON schema:\n{schema.text}"
        ),
    }
