"""MCP tools over the markdown library: `memo_search`, `memo_status`, `memo_reindex`, `memo_route`,
`memo_write` and `memo_read`.

Search catches up on edits made before the call (docs/library.md, *Catch-up first*);
`memo_reindex` repairs when a watcher went blind; `memo_write` lets an agent without file tools
keep its notes where its human reads them (inside a collection, atomically, indexed at once) and
`memo_read` reads a note or lines. They use
the app's library (`memo_root`, `MEMO_ROOT`), opened on first use so a server without a library
still starts; the library serialises its own calls (the SDK runs sync tools in threads).
"""

from __future__ import annotations

from typing import Any

from mcp_types import ToolAnnotations

from tideline.fields import (
    MEMO_READ,
    MEMO_REINDEX,
    MEMO_ROUTE,
    MEMO_SEARCH,
    MEMO_STATUS,
    MEMO_WRITE,
)
from tideline.mcp._base import ToolServer
from tideline.serve import annotated, searched

Query = annotated(MEMO_SEARCH, "query")
SearchPath = annotated(MEMO_SEARCH, "path")
K = annotated(MEMO_SEARCH, "k")
Mode = annotated(MEMO_SEARCH, "mode")
MinScore = annotated(MEMO_SEARCH, "min_score")
StatusPath = annotated(MEMO_STATUS, "path")
ReindexPath = annotated(MEMO_REINDEX, "path")
Full = annotated(MEMO_REINDEX, "full")
Question = annotated(MEMO_ROUTE, "query")
Candidates = annotated(MEMO_ROUTE, "k")
Prefix = annotated(MEMO_ROUTE, "prefix")
NotePath = annotated(MEMO_WRITE, "path")
NoteText = annotated(MEMO_WRITE, "text")
Append = annotated(MEMO_WRITE, "append")
NoteKey = annotated(MEMO_WRITE, "idempotency_key")
ReadPath = annotated(MEMO_READ, "path")
Start = annotated(MEMO_READ, "start")
End = annotated(MEMO_READ, "end")


def register(server: ToolServer) -> None:
    """Add the library tools to `server`, all calling the app's library."""
    server.accept(MEMO_SEARCH, MEMO_STATUS, MEMO_REINDEX, MEMO_ROUTE, MEMO_WRITE, MEMO_READ)
    for add in (_memo_search, _memo_status, _memo_reindex, _memo_route, _memo_write, _memo_read):
        add(server)


def _memo_search(server: ToolServer) -> None:
    app = server.app

    @server.tool(
        name="memo_search",
        annotations=ToolAnnotations(
            title="Search the notes library", read_only_hint=True, open_world_hint=False
        ),
    )
    def memo_search(
        query: Query, path: SearchPath, k: K, mode: Mode, min_score: MinScore
    ) -> dict[str, Any]:
        """Search the markdown notes by meaning and by exact words (BM25 + vectors, fused).

        `path` is a collection folder (e.g. "work/jira"), a sub-folder or one file; "*" searches
        every collection. Use mode "lex" for exact numbers, versions, host names and
        abbreviations, "vec" for paraphrases. Hits come best first; each `score` is its
        relevance, 0–1 (an estimated probability of being relevant), `explain` says how it was
        made, `location` (path:line) is where to read further with your file tools, with the
        heading and up to ~1,200 characters of the section. Results below the relevance floor
        are left out, so an empty list (with its `reason`) means no note is relevant. Edits
        made just before the call are already included.
        """
        return searched(
            "memo_search",
            server.call(
                "memo_search",
                lambda: app.library.search(query, path, k=k, mode=mode, min_score=min_score),
            ),
        )


def _memo_status(server: ToolServer) -> None:
    app = server.app

    @server.tool(
        name="memo_status",
        annotations=ToolAnnotations(
            title="Library status", read_only_hint=True, open_world_hint=False
        ),
    )
    def memo_status(path: StatusPath) -> dict[str, Any]:
        """List the collections (name, description, files, chunks, last sync, how many notes the
        index lags behind) and the folders that are not indexed and why (no _meta.yaml, too deep,
        unreadable files). `path` limits it to one collection or folder."""
        return server.call("memo_status", lambda: app.library.status(path))


def _memo_reindex(server: ToolServer) -> None:
    app = server.app

    @server.tool(
        name="memo_reindex",
        annotations=ToolAnnotations(
            title="Re-index notes",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    def memo_reindex(path: ReindexPath, full: Full) -> dict[str, Any]:
        """Bring the index of `path` (a collection, folder or file; "*" for all) up to date with
        the files. Only needed when search looks stale; `full=true` throws the index away and
        rebuilds it from the markdown (slow: every note is embedded again). Never edits notes."""
        return server.call(
            "memo_reindex",
            lambda: {"collections": [r.to_dict() for r in app.library.reindex(path, full=full)]},
        )


def _memo_route(server: ToolServer) -> None:
    app = server.app

    @server.tool(
        name="memo_route",
        annotations=ToolAnnotations(
            title="Pick collections for a question", read_only_hint=True, open_world_hint=False
        ),
    )
    def memo_route(query: Question, k: Candidates, prefix: Prefix) -> dict[str, Any]:
        """Which collections should a question be searched in? Returns candidate collections
        (name, path, description) best first; pass a candidate's `path` to memo_search.
        `prefix` (e.g. "work/") limits the answer to one branch of the name tree."""
        return server.call("memo_route", lambda: app.library.route(query, k=k, prefix=prefix))


def _memo_write(server: ToolServer) -> None:
    app = server.app

    @server.tool(
        name="memo_write",
        annotations=ToolAnnotations(
            title="Write a note",
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
    )
    def memo_write(
        path: NotePath, text: NoteText, append: Append, idempotency_key: NoteKey
    ) -> dict[str, Any]:
        """Create a markdown note in a collection of the library, or with append=true add to the
        end of one (an existing note is never overwritten). `path` is relative to the library
        root and lies inside a collection (see memo_status), e.g. "work/jira/2024-06-01.md";
        missing sub-folders are made. The write is atomic and indexed at once, so memo_search
        finds it on the next call; an edit made to the note meanwhile is kept. Pass an
        idempotency_key to retry an append safely after a lost answer. Returns the path,
        whether it was created, its size and the line where the new text starts."""
        return server.call(
            "memo_write",
            lambda: app.library.write(path, text, append=append, idempotency_key=idempotency_key),
        )


def _memo_read(server: ToolServer) -> None:
    app = server.app

    @server.tool(
        name="memo_read",
        annotations=ToolAnnotations(
            title="Read a note", read_only_hint=True, open_world_hint=False
        ),
    )
    def memo_read(path: ReadPath, start: Start, end: End) -> dict[str, Any]:
        """Read a note of the library, whole or lines start–end (at most 400 lines per call;
        `more` says whether lines follow). `path` may be a memo_search hit's location
        ("work/jira/x.md:42"), which starts there."""
        return server.call("memo_read", lambda: app.library.read(path, start, end))
