"""MCP tools over the markdown library: `memo_search`, `memo_status`, `memo_reindex`, `memo_route`,
`memo_write` and `memo_read`.

Search catches up on edits made before the call (docs/library.md, *Catch-up first*);
`memo_reindex` repairs when a watcher went blind; `memo_write` lets an agent without file tools
keep its notes where its human reads them (inside a collection, atomically, indexed at once) and
`memo_read` reads a note or lines. They use
the app's library (`memo_root`, `MEMO_ROOT`), opened on first use so a server without a library
still starts; the library serialises its own calls (the SDK runs sync tools in threads). Each
tool is its command in `tideline.fields` and the library call `tideline.serve.CALLS` maps it
onto; here are what the model reads (the descriptions) and the annotations.
"""

from __future__ import annotations

from mcp_types import ToolAnnotations

from tideline.fields import (
    MEMO_READ,
    MEMO_REINDEX,
    MEMO_ROUTE,
    MEMO_SEARCH,
    MEMO_STATUS,
    MEMO_WRITE,
)
from tideline.mcp._tool_server import WRITES, Tool, ToolServer

READS = {"read_only_hint": True, "open_world_hint": False}

TOOLS = (
    Tool(
        MEMO_SEARCH,
        """Search the markdown notes by meaning and by exact words (BM25 + vectors, fused).

        `path` is a collection folder (e.g. "work/jira"), a sub-folder or one file; "*" searches
        every collection. Use mode "lex" for exact numbers, versions, host names and
        abbreviations, "vec" for paraphrases. Hits come best first; each `score` is its
        relevance, 0–1 (an estimated probability of being relevant), `explain` says how it was
        made, `location` (path:line) is where to read further with your file tools, with the
        heading and up to ~1,200 characters of the section. Results below the relevance floor
        are left out, so an empty list (with its `reason`) means no note is relevant. Edits
        made just before the call are already included.
        """,
        ToolAnnotations(title="Search the notes library", **READS),
        titled=False,
    ),
    Tool(
        MEMO_STATUS,
        """List the collections (name, description, files, chunks, last sync, how many notes the
        index lags behind) and the folders that are not indexed and why (no _meta.yaml, too deep,
        unreadable files). `path` limits it to one collection or folder.""",
        ToolAnnotations(title="Library status", **READS),
        titled=False,
    ),
    Tool(
        MEMO_REINDEX,
        """Bring the index of `path` (a collection, folder or file; "*" for all) up to date with
        the files. Only needed when search looks stale; `full=true` throws the index away and
        rebuilds it from the markdown (slow: every note is embedded again). Never edits notes.""",
        ToolAnnotations(title="Re-index notes", idempotent_hint=True, **WRITES),
        titled=False,
    ),
    Tool(
        MEMO_ROUTE,
        """Which collections should a question be searched in? Returns candidate collections
        (name, path, description) best first; pass a candidate's `path` to memo_search.
        `prefix` (e.g. "work/") limits the answer to one branch of the name tree.""",
        ToolAnnotations(title="Pick collections for a question", **READS),
        titled=False,
    ),
    Tool(
        MEMO_WRITE,
        """Create a markdown note in a collection of the library, or with append=true add to the
        end of one (an existing note is never overwritten). `path` is relative to the library
        root and lies inside a collection (see memo_status), e.g. "work/jira/2024-06-01.md";
        missing sub-folders are made. The write is atomic and indexed at once, so memo_search
        finds it on the next call; an edit made to the note meanwhile is kept. Pass an
        idempotency_key to retry an append safely after a lost answer. Returns the path,
        whether it was created, its size and the line where the new text starts.""",
        ToolAnnotations(title="Write a note", idempotent_hint=False, **WRITES),
        titled=False,
    ),
    Tool(
        MEMO_READ,
        """Read a note of the library, whole or lines start–end (at most 400 lines per call;
        `more` says whether lines follow). `path` may be a memo_search hit's location
        ("work/jira/x.md:42"), which starts there.""",
        ToolAnnotations(title="Read a note", **READS),
        titled=False,
    ),
)


def register(server: ToolServer) -> None:
    """Add the library tools to `server`, all calling the app's library."""
    for tool in TOOLS:
        server.add_command(tool)
