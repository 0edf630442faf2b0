"""The memory tools: `sync_turn`, `memory_write`, `memory_search`, `memory_trace`, `memory_stats`,
`memory_forget`.

Each tool is its command in `tideline.fields` (arguments: names, bounds, defaults,
descriptions, synonyms) and the memory call `tideline.serve.CALLS` maps it onto; what is
written here is what the model reads: each tool's description, which names the agent, and its
annotations.
The SDK runs sync tools in worker threads: `Memory` takes the shared database lock for its
database work only and embeds outside it, so a long text from one client never stalls another
client's call. A call whose client has gone away still finishes and commits, because the worker
thread is never abandoned, so anything acknowledged stays written.
"""

from __future__ import annotations

from mcp_types import ToolAnnotations

from tideline.fields import (
    MEMORY_FORGET,
    MEMORY_SEARCH,
    MEMORY_STATS,
    MEMORY_TRACE,
    MEMORY_WRITE,
    SYNC_TURN,
)
from tideline.mcp._tool_server import READ_ONLY, WRITES, Tool, ToolServer

TOOLS = (
    Tool(
        SYNC_TURN,
        "Store one conversation turn in {agent}'s raw context, word for word. Call it for "
        "every user and assistant message so nothing said is ever lost; memories written "
        "with memory_write link back to these turns. Idempotent: sending the same turn "
        "again returns the existing id with created=false (with the same idempotency_key, "
        "the first answer with replayed=true). Returns the turn id.",
        ToolAnnotations(
            title="Keep a conversation turn",
            idempotent_hint=True,
            **WRITES,
        ),
    ),
    Tool(
        MEMORY_WRITE,
        "Write a memory into {agent}'s long-term memory: one thing that happened or was "
        "learned, in a sentence (gesture), with why it matters. Use it for events, decisions, "
        "feelings, open questions and facts about people worth recalling in later "
        "conversations — not for small talk. Link the turns it comes from (source_links, "
        "turn ids from sync_turn) so it can be traced. To correct a memory, write the right "
        "version with supersedes=<old id>: the old one leaves search but stays traceable. "
        "Pass an idempotency_key to retry safely after a lost answer. Returns the stored "
        "memory with its id and weight.",
        ToolAnnotations(
            title="Remember something",
            idempotent_hint=False,
            **WRITES,
        ),
    ),
    Tool(
        MEMORY_SEARCH,
        "Search {agent}'s long-term memory by meaning and by exact words. Call it before "
        "answering anything about the past, the user or earlier decisions. Returns memories "
        "(type 'narrative', with id and weight) and raw conversation turns (type 'turn', with "
        "id; include_turns=false leaves them out) in one list, best first: each "
        "`score` is an estimated probability (0–1) of being relevant and `explain` says how "
        "it was made. Results below a calibrated relevance floor are left out, so an empty "
        "list (with its `reason`) means nothing relevant is remembered. Follow a memory to "
        "its source turns with memory_trace.",
        ToolAnnotations(title="Search memory", idempotent_hint=True, **READ_ONLY),
    ),
    Tool(
        MEMORY_TRACE,
        "Show where one of {agent}'s memories came from: the memory, the conversation turns "
        "it links to, and the turns around each (window turns before and after). Use it when "
        "a memory from memory_search needs its exact wording or context.",
        ToolAnnotations(
            title="Trace a memory to its conversation", idempotent_hint=True, **READ_ONLY
        ),
    ),
    Tool(
        MEMORY_STATS,
        "Counts in {agent}'s memory: sessions, turns, memories by kind, the embedder and "
        "the database path. Cheap; use it to check the memory is reachable.",
        ToolAnnotations(title="Memory statistics", idempotent_hint=True, **READ_ONLY),
    ),
    Tool(
        MEMORY_FORGET,
        "Erase something from {agent}'s memory when the user asks you to forget it: turns "
        "(ids), a whole conversation (session), memories (narrative ids), or every turn and "
        "memory containing all the words of a query. First call it without confirm to see "
        "exactly what would go and show the user; call again with confirm=true to erase. "
        "The words, vectors and search entries are erased for good; a tombstone keeps the "
        "id, time and reason, so links and traces read '[forgotten]'. To correct a memory "
        "instead, use memory_write with supersedes.",
        ToolAnnotations(
            title="Forget something",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    ),
)


def register(server: ToolServer) -> None:
    """Add the memory tools to `server`, all calling the app's memory."""
    for tool in TOOLS:
        server.add_command(tool)
