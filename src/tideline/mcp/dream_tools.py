"""The DREAM tools and prompts: `dream_run`, `memory_threads`, and one MCP prompt per layer.

`dream_run` maps onto `Tideline.dream_using`: the configured endpoint, else the client's own model
through MCP sampling, else none (the LLM layers are skipped, `llm_skipped` says why, and a later
run does them). It honours the configured token budget (`dream_run_budget`), like the CLI. A sync
tool: the SDK runs it in a worker thread and it holds no lock of its own, so the memory tools go
on while it waits on the model.

The prompts (`dream_solidify`, `dream_digest`, `dream_drift`, `dream_sleep`) are the packaged
prompt files rendered with a day's inputs and the "by hand" instructions, so a client's own model
can run a layer itself and write back through `memory_write` and `memory_threads`.
"""

from __future__ import annotations

from mcp.server.mcpserver.prompts.base import Prompt
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ToolAnnotations

from tideline.consolidate.dream import PromptInfo, list_prompts, render_prompt
from tideline.errors import TidelineError
from tideline.fields import DREAM_RUN, MEMORY_THREADS
from tideline.mcp._rounds import add_run
from tideline.mcp._tool_server import WRITES, Tool, ToolServer
from tideline.serve import annotated, error_message

Date = annotated(DREAM_RUN, "date")

THREADS = Tool(
    MEMORY_THREADS,
    "The threads of {agent}'s dreaming: open directions (a question left hanging, a "
    "plan, a worry, a pattern forming) and conflicts between memories, each with the "
    "memories that raised it and when it was last touched. action='list' (default; "
    "status open, resolved, dropped or all); 'open' with title, why and memories (ids "
    "from memory_search); 'touch' with thread_id and a note or memories; 'close' with "
    "thread_id, status resolved or dropped, and why. Threads are never deleted.",
    ToolAnnotations(
        title="Open threads",
        idempotent_hint=False,
        **WRITES,
    ),
)


DREAM = Tool(
    DREAM_RUN,
    "Run {agent}'s daily dream for one day (default today): solidify the day's "
    "conversation into memories linked to their turns, sleep (the profile), the script "
    "layer, comb (re-weigh, self-concept, threads), night drift, and a symbolic dream. "
    "layers runs only some; finished layers are not redone, a failed one is retried "
    "next run. Spends at most the configured token budget (dream_run_budget): a call "
    "that would pass it stops the run cleanly. Slow (minutes with a large model); "
    "memory tools keep working. Returns the run record: each layer's status, tokens, "
    "seconds and the ids it wrote.",
    ToolAnnotations(
        title="Dream a day",
        idempotent_hint=True,
        **WRITES,
    ),
)


def register(server: ToolServer) -> None:
    """Add the dream tools and the dream prompts to `server`."""
    add_run(server, DREAM)
    server.add_command(THREADS)
    for info in list_prompts():
        server.add_prompt(_prompt(server, info))


def _prompt(server: ToolServer, info: PromptInfo) -> Prompt:
    """One dream prompt, rendered with the day's inputs and the by-hand instructions. Sync: the
    SDK renders it in a worker thread, off the event loop, while it reads the database."""

    def render(date: Date) -> str:
        try:
            dream = server.app.dream
            found = dream.prompt_inputs(info.name, date)
            return render_prompt(info.name, found, by_hand=True).text()
        except TidelineError as exc:  # the SDK would hide the message behind its own
            raise MCPError(INVALID_PARAMS, error_message(info.name, exc)) from None

    return Prompt.from_function(
        render,
        name=info.name,
        title=f"Dream layer {info.layer} by hand",
        description=f"{info.description} (version {info.version}; reads {', '.join(info.inputs)})",
    )
