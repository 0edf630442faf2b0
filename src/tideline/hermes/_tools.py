"""The tools a Hermes agent calls: each a thin mapping over the core call the MCP tool of the
same name makes, with the same arguments (declared once in `tideline.fields`), the same one-line
errors (`tideline.serve.error_message`) and the answer as a JSON string, as Hermes wants it.

Turns are kept by the provider itself (`sync_turn`), so there is no `sync_turn` tool; search
includes the raw turns unless told otherwise, as on every surface. In a context that must not write (a subagent, cron), the tools that write
refuse in one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tideline.app import Tideline
from tideline.errors import InvalidInput, TidelineError
from tideline.fields import (
    FACT_CLOSE,
    FACT_REJECT,
    MEMO_SEARCH,
    MEMO_WRITE,
    MEMORY_PROFILE,
    MEMORY_SEARCH,
    MEMORY_TRACE,
    MEMORY_WRITE,
    Command,
)
from tideline.serve import error_message, run_tool, tool_arguments, tool_schema


@dataclass(frozen=True)
class Tool:
    command: Command  # the arguments, and the service call (`tideline.serve.CALLS`)
    description: str
    writes: bool = False


TOOLS: dict[str, Tool] = {
    t.command.tool or "": t
    for t in (
        Tool(
            MEMORY_SEARCH,
            "Search your long-term memory (Tideline) by meaning and by exact words: the memories "
            "written down and, unless include_turns=false, the raw turns of every earlier "
            "conversation, best first, each `score` an estimated probability (0-1) of being "
            "relevant. Call it before answering anything about the past, the user or earlier "
            "decisions that the recalled memory context does not already answer. An empty list "
            "with its `reason` means nothing relevant is remembered.",
        ),
        Tool(
            MEMORY_TRACE,
            "Trace a memory (narrative id from memory_search) to the conversation turns it came "
            "from, word for word, with `window` turns around each.",
        ),
        Tool(
            MEMORY_WRITE,
            "Write one thing worth recalling in later conversations into long-term memory: an "
            "event, decision, feeling, open question or fact about a person, in a sentence "
            "(gesture) with why it matters. Every turn is already kept word for word; write "
            "what a later you should know. To correct a memory, write the right version with "
            "supersedes=<old id>.",
            writes=True,
        ),
        Tool(
            MEMORY_PROFILE,
            "The facts formed about the user, the people in their life and yourself, each with "
            "its status, confidence and the turns it rests on; as_of='2023-06-15' answers what "
            "was believed on that date. Correct a wrong fact with fact_reject, an outdated one "
            "with fact_close.",
        ),
        Tool(
            FACT_REJECT,
            "Reject a fact of the profile that is wrong (on the user's word), saying why; it "
            "stays on the fact's timeline and is never offered again.",
            writes=True,
        ),
        Tool(
            FACT_CLOSE,
            "Close a fact of the profile that held once and no longer does (moved, changed "
            "jobs), saying why.",
            writes=True,
        ),
        Tool(
            MEMO_SEARCH,
            "Search the markdown notes library by meaning and by exact words; `path` is a "
            "collection folder, a sub-folder or one file ('*': every collection). Each hit has "
            "its `location` (path:line) and the text of its section.",
        ),
        Tool(
            MEMO_WRITE,
            "Create a markdown note in a collection of the notes library, or with append=true "
            "add to the end of one (never overwrites); indexed at once.",
            writes=True,
        ),
    )
}


def tool_schemas() -> list[dict[str, Any]]:
    """Every tool in the OpenAI function format."""
    return [tool_schema(t.command, t.description) for t in TOOLS.values()]


def call_tool(app: Tideline, name: str, given: Mapping[str, Any], *, may_write: bool) -> str:
    """Run tool `name` with the model's arguments; its answer, or `{"error": "<one line>"}`,
    as JSON."""
    tool = TOOLS.get(name)
    try:
        if tool is None:
            raise InvalidInput(
                f"there is no tool {name!r}; the tools are: {', '.join(sorted(TOOLS))}"
            )
        if tool.writes and not may_write:
            raise InvalidInput(
                f"{name} writes to memory, and this agent (a subagent or cron run) may only "
                "read it; tell the main conversation what to keep"
            )
        arguments = tool_arguments(tool.command, given)
        answer = run_tool(app, name, arguments)  # each service takes the lock it needs
    except TidelineError as exc:
        return json.dumps({"error": error_message(name, exc)}, ensure_ascii=False)
    return json.dumps(answer, ensure_ascii=False, default=str)
