"""The profile tools: `memory_profile`, `fact_reject`, `fact_close`, `fact_timeline`, `sleep_run`.

They map onto `Tideline.profile` and `Tideline.sleep_using`. A person (or the agent on their
word) may reject or close a fact, never delete or edit it. `sleep_run` is a sync tool, so the
SDK runs it in a worker thread; it holds no lock of its own (`Profile` takes the database lock
only for its short reads and the one apply), so `sync_turn` and `memory_write` from any client
go on while the sleep waits on the model. Its LLM is the configured endpoint, else the client's
own model through MCP sampling, else none: the LLM steps are skipped and `llm_skipped` says why.
"""

from __future__ import annotations

from mcp_types import ToolAnnotations

from tideline.fields import (
    FACT_CLOSE,
    FACT_REJECT,
    FACT_TIMELINE,
    MEMORY_PROFILE,
    SLEEP_RUN,
)
from tideline.mcp._rounds import add_run
from tideline.mcp._tool_server import READ_ONLY, WRITES, Tool, ToolServer

# Rejecting or closing changes a fact's status for good (nothing reopens it), yet deletes nothing.
CORRECTS = WRITES


TOOLS = (
    Tool(
        MEMORY_PROFILE,
        "The facts {agent} has formed about the user, the people in their life and itself "
        "(subject user, a name, or self), each with status (suspected, confirmed, "
        "established; rejected and closed ones with status='all'), confidence, and the "
        "conversation turns it rests on (evidence, with their text). Use it to check what "
        "is believed and why before relying on it; correct a wrong fact with fact_reject, an "
        "outdated one with fact_close. as_of='2023-06-15' answers what was believed on that "
        "date in the user's own time (facts then, with the events and people of then).",
        ToolAnnotations(title="What is known about the user", idempotent_hint=True, **READ_ONLY),
    ),
    Tool(
        FACT_REJECT,
        "Mark one of {agent}'s facts as wrong, with the reason (e.g. the user said it is "
        "not true). The fact is not deleted: it keeps its evidence and gets an end time and "
        "the reason on its timeline, and stops being used. Final: a rejected fact never "
        "comes back; a corrected value is a new fact formed by the next sleep.",
        ToolAnnotations(title="Mark a fact wrong", idempotent_hint=False, **CORRECTS),
    ),
    Tool(
        FACT_CLOSE,
        "Mark one of {agent}'s facts as no longer true (it was true, e.g. the user moved "
        "away). The fact is not deleted: it keeps its evidence and gets an end time on its "
        "timeline. Final: a closed fact never reopens.",
        ToolAnnotations(title="Mark a fact no longer true", idempotent_hint=False, **CORRECTS),
    ),
    Tool(
        FACT_TIMELINE,
        "The history of one of {agent}'s facts: the fact with its evidence, the chain of "
        "facts it superseded or that superseded it (oldest first), and every status change "
        "with its time, reason and the sleep run that made it.",
        ToolAnnotations(title="A fact's history", idempotent_hint=True, **READ_ONLY),
    ),
)


SLEEP = Tool(
    SLEEP_RUN,
    "Run {agent}'s sleep: read the conversations not digested yet and update the "
    "profile (facts, people, events, contradictions, expiry). Slow (one LLM call per "
    "step and session; minutes with a large model); memory tools keep working "
    "meanwhile. dry_run=true shows the plan and applies nothing. Returns the run's "
    "report: status, each step, what changed, tokens, and what was skipped and why.",
    ToolAnnotations(
        title="Consolidate conversations",
        idempotent_hint=False,
        **WRITES,
    ),
)


def register(server: ToolServer) -> None:
    """Add the profile and sleep tools to `server`."""
    for tool in TOOLS:
        server.add_command(tool)
    add_run(server, SLEEP)
