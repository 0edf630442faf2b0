"""The memory tools: `sync_turn`, `memory_write`, `memory_search`, `memory_trace`, `memory_stats`,
`memory_forget`.

Each tool maps its JSON arguments onto `Tideline.memory` and its result onto a dict; nothing
else happens here. Arguments (names, bounds, defaults, descriptions, synonyms) are declared in
`tideline.fields`; descriptions of the tools are written for the model and name the agent.
The SDK runs sync tools in worker threads: `Memory` takes the shared database lock for its
database work only and embeds outside it, so a long text from one client never stalls another
client's call. A call whose client has gone away still finishes and commits, because the worker
thread is never abandoned, so anything acknowledged stays written.
"""

from __future__ import annotations

from typing import Any

from mcp_types import ToolAnnotations

from tideline.fields import MEMORY_FORGET, MEMORY_SEARCH, MEMORY_TRACE, MEMORY_WRITE, SYNC_TURN
from tideline.mcp._base import ToolServer
from tideline.serve import annotated, names, searched

READ_ONLY = {"read_only_hint": True, "destructive_hint": False, "open_world_hint": False}

Session = annotated(SYNC_TURN, "session")
Role = annotated(SYNC_TURN, "role")
Text = annotated(SYNC_TURN, "text")
Speaker = annotated(SYNC_TURN, "speaker")
Timestamp = annotated(SYNC_TURN, "timestamp")
TurnKey = annotated(SYNC_TURN, "idempotency_key")

Gesture = annotated(MEMORY_WRITE, "gesture")
WriteContext = annotated(MEMORY_WRITE, "context")
Cognition = annotated(MEMORY_WRITE, "cognition_direction")
Importance = annotated(MEMORY_WRITE, "importance")
Emotional = annotated(MEMORY_WRITE, "emotional")
Unresolved = annotated(MEMORY_WRITE, "unresolved")
WriteTags = annotated(MEMORY_WRITE, "tags")
EntitiesRole = annotated(MEMORY_WRITE, "entities_role")
Entities = annotated(MEMORY_WRITE, "related_entities")
SourceLinks = annotated(MEMORY_WRITE, "source_links")
WriteKind = annotated(MEMORY_WRITE, "kind")
Supersedes = annotated(MEMORY_WRITE, "supersedes")
WriteKey = annotated(MEMORY_WRITE, "idempotency_key")

Query = annotated(MEMORY_SEARCH, "query")
K = annotated(MEMORY_SEARCH, "k")
Since = annotated(MEMORY_SEARCH, "since")
Until = annotated(MEMORY_SEARCH, "until")
Today = annotated(MEMORY_SEARCH, "today")
MinWeight = annotated(MEMORY_SEARCH, "min_weight")
SearchTags = annotated(MEMORY_SEARCH, "tags")
SearchKind = annotated(MEMORY_SEARCH, "kind")
IncludeTurns = annotated(MEMORY_SEARCH, "include_turns")
Mode = annotated(MEMORY_SEARCH, "mode")
MinScore = annotated(MEMORY_SEARCH, "min_score")

NarrativeId = annotated(MEMORY_TRACE, "narrative_id")
Window = annotated(MEMORY_TRACE, "window")

ForgetQuery = annotated(MEMORY_FORGET, "query")
ForgetTurns = annotated(MEMORY_FORGET, "turns")
ForgetSession = annotated(MEMORY_FORGET, "session")
ForgetNarratives = annotated(MEMORY_FORGET, "narratives")
Why = annotated(MEMORY_FORGET, "why")
Confirm = annotated(MEMORY_FORGET, "confirm")


def register(server: ToolServer) -> None:
    """Add the memory tools to `server`, all calling the app's memory."""
    server.accept(SYNC_TURN, MEMORY_WRITE, MEMORY_SEARCH, MEMORY_TRACE, MEMORY_FORGET)
    for add in (
        _sync_turn,
        _memory_write,
        _memory_search,
        _memory_trace,
        _memory_stats,
        _memory_forget,
    ):
        add(server)


def _sync_turn(server: ToolServer) -> None:
    agent = server.app.settings.agent_name

    @server.tool(
        name="sync_turn",
        title="Keep a conversation turn",
        description=(
            f"Store one conversation turn in {agent}'s raw context, word for word. Call it for "
            "every user and assistant message so nothing said is ever lost; memories written "
            "with memory_write link back to these turns. Idempotent: sending the same turn "
            "again returns the existing id with created=false (with the same idempotency_key, "
            "the first answer with replayed=true). Returns the turn id."
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
        session: Session,
        role: Role,
        text: Text,
        speaker: Speaker,
        timestamp: Timestamp,
        idempotency_key: TurnKey,
    ) -> dict[str, Any]:
        return server.call(
            "sync_turn",
            lambda: server.app.memory.sync_turn(
                session=session,
                role=role,
                text=text,
                speaker=speaker,
                timestamp=timestamp,
                idempotency_key=idempotency_key,
            ),
        )


def _memory_write(server: ToolServer) -> None:
    agent = server.app.settings.agent_name

    @server.tool(
        name="memory_write",
        title="Remember something",
        description=(
            f"Write a memory into {agent}'s long-term memory: one thing that happened or was "
            "learned, in a sentence (gesture), with why it matters. Use it for events, decisions, "
            "feelings, open questions and facts about people worth recalling in later "
            "conversations — not for small talk. Link the turns it comes from (source_links, "
            "turn ids from sync_turn) so it can be traced. To correct a memory, write the right "
            "version with supersedes=<old id>: the old one leaves search but stays traceable. "
            "Pass an idempotency_key to retry safely after a lost answer. Returns the stored "
            "memory with its id and weight."
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
        gesture: Gesture,
        context: WriteContext,
        cognition_direction: Cognition,
        importance: Importance,
        emotional: Emotional,
        unresolved: Unresolved,
        tags: WriteTags,
        entities_role: EntitiesRole,
        related_entities: Entities,
        source_links: SourceLinks,
        kind: WriteKind,
        supersedes: Supersedes,
        idempotency_key: WriteKey,
    ) -> dict[str, Any]:
        return server.call(
            "memory_write",
            lambda: server.app.memory.write(
                gesture=gesture,
                context=context,
                cognition_direction=cognition_direction,
                importance=importance,
                emotional=emotional,
                unresolved=unresolved,
                tags=names(tags),
                entities_role=entities_role,
                related_entities=names(related_entities),
                source_links=source_links,
                kind=kind,
                supersedes=supersedes,
                idempotency_key=idempotency_key,
            ),
        )


def _memory_search(server: ToolServer) -> None:
    agent = server.app.settings.agent_name

    @server.tool(
        name="memory_search",
        title="Search memory",
        description=(
            f"Search {agent}'s long-term memory by meaning and by exact words. Call it before "
            "answering anything about the past, the user or earlier decisions. Returns memories "
            "(type 'narrative', with id and weight) and raw conversation turns (type 'turn', with "
            "id; include_turns=false leaves them out) in one list, best first: each "
            "`score` is an estimated probability (0–1) of being relevant and `explain` says how "
            "it was made. Results below a calibrated relevance floor are left out, so an empty "
            "list (with its `reason`) means nothing relevant is remembered. Follow a memory to "
            "its source turns with memory_trace."
        ),
        annotations=ToolAnnotations(title="Search memory", idempotent_hint=True, **READ_ONLY),
    )
    def memory_search(
        query: Query,
        k: K,
        since: Since,
        until: Until,
        min_weight: MinWeight,
        tags: SearchTags,
        kind: SearchKind,
        include_turns: IncludeTurns,
        mode: Mode,
        min_score: MinScore,
        today: Today,
    ) -> dict[str, Any]:
        return searched(
            "memory_search",
            server.call(
                "memory_search",
                lambda: server.app.memory.search(
                    query=query,
                    k=k,
                    since=since,
                    until=until,
                    min_weight=min_weight,
                    tags=names(tags),
                    kind=kind,
                    include_turns=include_turns,
                    mode=mode,
                    min_score=min_score,
                    today=today,
                ),
            ),
        )


def _memory_trace(server: ToolServer) -> None:
    agent = server.app.settings.agent_name

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
    def memory_trace(narrative_id: NarrativeId, window: Window) -> dict[str, Any]:
        return server.call(
            "memory_trace",
            lambda: server.app.memory.trace(narrative_id=narrative_id, window=window),
        )


def _memory_stats(server: ToolServer) -> None:
    agent = server.app.settings.agent_name

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
        return server.call("memory_stats", lambda: server.app.memory.stats())


def _memory_forget(server: ToolServer) -> None:
    agent = server.app.settings.agent_name

    @server.tool(
        name="memory_forget",
        title="Forget something",
        description=(
            f"Erase something from {agent}'s memory when the user asks you to forget it: turns "
            "(ids), a whole conversation (session), memories (narrative ids), or every turn and "
            "memory containing all the words of a query. First call it without confirm to see "
            "exactly what would go and show the user; call again with confirm=true to erase. "
            "The words, vectors and search entries are erased for good; a tombstone keeps the "
            "id, time and reason, so links and traces read '[forgotten]'. To correct a memory "
            "instead, use memory_write with supersedes."
        ),
        annotations=ToolAnnotations(
            title="Forget something",
            read_only_hint=False,
            destructive_hint=True,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    def memory_forget(
        query: ForgetQuery,
        turns: ForgetTurns,
        session: ForgetSession,
        narratives: ForgetNarratives,
        why: Why,
        confirm: Confirm,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            found = server.app.memory.forget(
                turns=turns or (),
                session=session,
                narratives=narratives or (),
                query=query,
                why=why,
                confirm=bool(confirm),
            )
            return {**found.to_dict(), "done": found.done, "empty": found.empty}

        return server.call("memory_forget", run)
