"""What a tool's caller reads when a call goes wrong or finds nothing, the same from every driver
that serves tools (the MCP server, the Hermes provider): the core's one-line message with the next
call to make, a schema violation in one line, and a search's empty answer with its reason.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from tideline.errors import NotFound, PathOutsideLibrary, SleepBusy, TidelineError

MEMO_TOOLS = (
    "memo_search",
    "memo_status",
    "memo_reindex",
    "memo_route",
    "memo_write",
    "memo_read",
)
FACT_TOOLS = ("fact_reject", "fact_close", "fact_timeline")

#: What to call next after a core error, by tool and error type (the first match wins).
NEXT_STEP: dict[tuple[str, type[TidelineError]], str] = {
    ("memory_write", NotFound): "call memory_search to find turn ids",
    ("memory_trace", NotFound): "call memory_search to find narrative ids",
    ("memory_forget", NotFound): "call memory_search to find the ids",
    **{
        (tool, PathOutsideLibrary): "pass a path relative to the library root, e.g. the 'path' "
        "of a collection from memo_status"
        for tool in MEMO_TOOLS
    },
    **{
        (tool, NotFound): "call memo_status to list the collections and what is not indexed"
        for tool in MEMO_TOOLS
    },
    **{
        (tool, NotFound): "call memory_profile with status='all' to find fact ids"
        for tool in FACT_TOOLS
    },
    ("sleep_run", SleepBusy): "wait for that sleep to finish; the memory tools work meanwhile",
    ("dream_run", SleepBusy): "wait for that run to finish; the memory tools work meanwhile",
}
_TOOL_NAME = re.compile(r"\b(?:memory|memo)_[a-z_]+")


def error_message(tool: str, exc: TidelineError) -> str:
    """One line: the core's message, then `; next: <hint>` unless it already names that tool."""
    message = one_line(str(exc))
    hint = next(
        (h for (t, kind), h in NEXT_STEP.items() if t == tool and isinstance(exc, kind)), None
    )
    if hint is None:
        return message
    target = _TOOL_NAME.search(hint)
    if target and target.group() in message:
        return message
    return f"{message}; next: {hint}"


def describe_validation(tool: str, exc: ValidationError) -> str:
    """`memory_search: argument 'k': … (got 'ten'); fix the arguments to match the … schema`."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            parts.append(f"missing required argument {where!r}")
        else:
            got = repr(err.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            msg = err["msg"][:1].lower() + err["msg"][1:]
            parts.append(f"argument {where!r}: {msg} (got {got})")
    return one_line(f"{tool}: {'; '.join(parts)}; fix the arguments to match the {tool} schema")


def one_line(text: str) -> str:
    return " ".join(text.split())


def searched(answer: dict[str, Any], again: str) -> dict[str, Any]:
    """A search's answer: an empty list keeps its `reason`, and when the relevance floor left
    results out the reason says how the caller shows them (`again`: "call memo_search again
    with min_score=0", "pass min_score=0")."""
    if not answer.get("hits") and answer.get("left_out"):
        answer["reason"] = f"{answer['reason']}; {again} to see them"
    return answer
