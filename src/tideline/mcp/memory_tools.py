"""The memory tools: `sync_turn`, `memory_write`, `memory_search`, `memory_trace`, `memory_stats`.

Each tool maps its JSON arguments onto `Tideline.memory` and its result onto a dict; nothing
else happens here. Descriptions are written for the model and name the agent. The SDK runs sync
tools in worker threads: `Memory` takes the shared database lock for its database work only and
embeds outside it, so a long text from one client never stalls another client's call (the lock
here only guards opening the database and embedder, which happens lazily). A call whose client has
gone away still finishes and commits, because the worker thread is never abandoned, so anything
acknowledged stays written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from tideline.errors import NotFound, TidelineError
from tideline.mcp._lock import shared_lock

if TYPE_CHECKING:
    from tideline.app import Tideline
    from tideline.mcp.server import TidelineServer
    from tideline.memory import Memory

Kind = Literal["narrative", "dream", "reflection"]

READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "open_world_hint": False}
ALIASES: dict[str, dict[str, str]] = {
    "memory_search": {
        **dict.fromkeys(("q", "text", "search", "question", "query_text"), "query"),
        **dict.fromkeys(("limit", "top_k", "n", "max_results", "count"), "k"),
        **dict.fromkeys(("include_raw", "with_turns", "turns"), "include_turns"),
        **dict.fromkeys(("after", "from", "start"), "since"),
        **dict.fromkeys(("before", "to", "end"), "until"),
        "tag": "tags",
    },
    "memory_write": {
        **dict.fromkeys(("content", "text", "memory", "summary"), "gesture"),
        **dict.fromkeys(("turn_ids", "sources", "source_turns", "turns"), "source_links"),
        "entities": "related_entities",
        "tag": "tags",
    },
    "memory_trace": {
        **dict.fromkeys(("id", "memory_id", "narrative"), "narrative_id"),
        **dict.fromkeys(("context", "neighbours", "neighbors"), "window"),
    },
    "sync_turn": {
        "session_id": "session",
        **dict.fromkeys(("content", "message"), "text"),
        **dict.fromkeys(("time", "ts", "created_at"), "timestamp"),
        "author": "speaker",
    },
}

_NEXT_STEP = {
    "memory_write": "call memory_search with include_turns=true to find turn ids",
    "memory_trace": "call memory_search to find narrative ids",
}


def register(server: TidelineServer, app: Tideline) -> None:
    """Add the memory tools to `server`, all calling `app.memory`."""
    agent = app.settings.agent_name
    lock = shared_lock(app)
    server.tool_aliases.update(ALIASES)

    def call(tool: str, fn: Callable[[Memory], Any]) -> dict[str, Any]:
        try:
            with lock:
                memory = app.memory
            return _to_dict(fn(memory))
        except TidelineError as exc:
            message = " ".join(str(exc).split())
            hint = _NEXT_STEP.get(tool)
            if isinstance(exc, NotFound) and hint and "memory_search" not in message:
                message = f"{message}; {hint}"
            raise ToolError(message) from exc

    @server.tool(
        name="sync_turn",
        title="Keep a conversation turn",
        description=(
            f"Store one conversation turn in {agent}'s raw context, word for word. Call it for "
            "every user and assistant message so nothing said is ever lost; memories written "
            "with memory_write link back to these turns. Idempotent: sending the same turn "
            "again returns the existing id with created=false. Returns the turn id."
        ),
        annotations=ToolAnnotations(
            title="Keep a conversation turn",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    def sync_turn(
        session: Annotated[
            str,
            Field(description="Conversation id, stable for the whole conversation (any string)."),
        ],
        role: Annotated[
            str, Field(description="Who spoke: 'user', 'assistant', 'system' or 'tool'.")
        ],
        text: Annotated[str, Field(description="The full text of the turn, unshortened.")],
        speaker: Annotated[
            str | None,
            Field(description="Name of the speaker when it matters (e.g. the user's name)."),
        ] = None,
        timestamp: Annotated[
            str | None,
            Field(description="When it was said, ISO 8601 (default: now)."),
        ] = None,
    ) -> dict[str, Any]:
        return call(
            "sync_turn",
            lambda m: m.sync_turn(
                session=session, role=role, text=text, speaker=speaker, timestamp=timestamp
            ),
        )

    @server.tool(
        name="memory_write",
        title="Remember something",
        description=(
            f"Write a memory into {agent}'s long-term memory: one thing that happened or was "
            "learned, in a sentence (gesture), with why it matters. Use it for events, decisions, "
            "feelings, open questions and facts about people worth recalling in later "
            "conversations — not for small talk. Link the turns it comes from (source_links, "
            "turn ids from sync_turn) so it can be traced. Returns the stored memory with its id "
            "and weight."
        ),
        annotations=ToolAnnotations(
            title="Remember something",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    def memory_write(
        gesture: Annotated[
            str,
            Field(description="What happened or was learned, one or two sentences, past tense."),
        ],
        context: Annotated[
            str, Field(description="Circumstances: when, where, who, what led to it.")
        ] = "",
        cognition_direction: Annotated[
            str,
            Field(description="What you think or will do about it; why it matters."),
        ] = "",
        importance: Annotated[
            int, Field(ge=1, le=5, description="1 trivial … 5 life-changing.")
        ] = 3,
        emotional: Annotated[
            int, Field(ge=1, le=5, description="Emotional intensity, 1 flat … 5 intense.")
        ] = 3,
        unresolved: Annotated[
            int, Field(ge=1, le=5, description="1 settled … 5 wide open, needs follow-up.")
        ] = 1,
        tags: Annotated[
            list[str] | str | None,
            Field(description="Short topic tags, e.g. ['work', 'health'] (or 'work, health')."),
        ] = None,
        entities_role: Annotated[
            str,
            Field(description="Who played which role, as 'Anna=manager+decider; Ben=helper'."),
        ] = "",
        related_entities: Annotated[
            list[str] | str | None,
            Field(description="Names of the people, places and things involved."),
        ] = None,
        source_links: Annotated[
            list[int] | None,
            Field(description="Ids of the turns this memory comes from (from sync_turn)."),
        ] = None,
        kind: Annotated[
            Kind,
            Field(description="'narrative' (default), 'reflection' or 'dream' (imagined)."),
        ] = "narrative",
    ) -> dict[str, Any]:
        return call(
            "memory_write",
            lambda m: m.write(
                gesture=gesture,
                context=context,
                cognition_direction=cognition_direction,
                importance=importance,
                emotional=emotional,
                unresolved=unresolved,
                tags=_names(tags),
                entities_role=entities_role,
                related_entities=_names(related_entities),
                source_links=source_links,
                kind=kind,
            ),
        )

    @server.tool(
        name="memory_search",
        title="Search memory",
        description=(
            f"Search {agent}'s long-term memory by meaning and by exact words. Call it before "
            "answering anything about the past, the user or earlier decisions. Returns memories "
            "(type 'narrative', with id and weight) best first; with include_turns=true also the "
            "raw conversation turns (type 'turn', with id). Follow a memory to its source turns "
            "with memory_trace."
        ),
        annotations=ToolAnnotations(title="Search memory", idempotent_hint=True, **READ_ONLY),
    )
    def memory_search(
        query: Annotated[
            str, Field(description="What to look for, in natural language or keywords.")
        ],
        k: Annotated[int, Field(ge=1, le=100, description="How many results (default 10).")] = 10,
        since: Annotated[
            str | None, Field(description="Only results from this time on (ISO date or time).")
        ] = None,
        until: Annotated[
            str | None, Field(description="Only results before this time (ISO date or time).")
        ] = None,
        min_weight: Annotated[
            float | None,
            Field(ge=0, le=1, description="Only memories at least this weighty (0–1)."),
        ] = None,
        tags: Annotated[
            list[str] | str | None, Field(description="Only memories with one of these tags.")
        ] = None,
        kind: Annotated[
            Kind | None, Field(description="Only this kind: narrative, reflection or dream.")
        ] = None,
        include_turns: Annotated[
            bool, Field(description="Also search the raw conversation turns.")
        ] = False,
        mode: Annotated[
            Literal["hybrid", "lex", "vec"],
            Field(
                description="hybrid (default); lex for exact names, numbers and rare words; "
                "vec for paraphrases."
            ),
        ] = "hybrid",
    ) -> dict[str, Any]:
        return call(
            "memory_search",
            lambda m: m.search(
                query=query,
                k=k,
                since=since,
                until=until,
                min_weight=min_weight,
                tags=_names(tags),
                kind=kind,
                include_turns=include_turns,
                mode=mode,
            ),
        )

    @server.tool(
        name="memory_trace",
        title="Trace a memory to its conversation",
        description=(
            f"Show where one of {agent}'s memories came from: the memory, the conversation turns "
            "it links to, and the turns around each (window turns before and after). Use it when "
            "a memory from memory_search needs its exact wording or context."
        ),
        annotations=ToolAnnotations(
            title="Trace a memory to its conversation", idempotent_hint=True, **READ_ONLY
        ),
    )
    def memory_trace(
        narrative_id: Annotated[int, Field(description="Memory id, from memory_search.")],
        window: Annotated[
            int, Field(ge=0, le=20, description="Neighbouring turns on each side (default 2).")
        ] = 2,
    ) -> dict[str, Any]:
        return call("memory_trace", lambda m: m.trace(narrative_id=narrative_id, window=window))

    @server.tool(
        name="memory_stats",
        title="Memory statistics",
        description=(
            f"Counts in {agent}'s memory: sessions, turns, memories by kind, the embedder and "
            "the database path. Cheap; use it to check the memory is reachable."
        ),
        annotations=ToolAnnotations(title="Memory statistics", idempotent_hint=True, **READ_ONLY),
    )
    def memory_stats() -> dict[str, Any]:
        return call("memory_stats", lambda m: m.stats())


def _names(value: list[str] | str | None) -> list[str] | None:
    """Models send lists, JSON strings (pre-parsed by the SDK) or 'a, b'; the core gets a list."""
    if value is None or isinstance(value, list):
        return value
    return [part.strip() for part in value.split(",") if part.strip()]


def _to_dict(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        return result
    if hasattr(result, "to_dict"):
        return result.to_dict()
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return dataclasses.asdict(result)
    return {"result": result}
