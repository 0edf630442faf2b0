"""MCP tools over the markdown library: `memo_search`, `memo_status`, `memo_reindex`, `memo_route`.

The agent writes notes with its ordinary file tools; these tools only read (search catches up on
edits made just before the call) or repair (`memo_reindex`, when a watcher went blind). The
library root comes from `settings.memo_root` (`MEMO_ROOT`). One `Library` — and one loaded
embedder — serves every call; a lock serialises calls because the SDK runs sync tools in threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from tideline.config import Settings
from tideline.embed import load_embedder
from tideline.errors import NotFound, TidelineError
from tideline.library import Library, PathOutsideLibrary

T = TypeVar("T")

_NEXT_STEP = {
    PathOutsideLibrary: "pass a path relative to the library root, e.g. the 'path' of a "
    "collection from memo_status",
    NotFound: "call memo_status to list the collections and what is not indexed",
}


class _LibraryHandle:
    """Opens the library on first use, so a server without MEMO_ROOT still starts."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.lock = threading.Lock()
        self._library: Library | None = None

    def call(self, fn: Callable[[Library], T]) -> T:
        with self.lock:
            try:
                if self._library is None:
                    root = self.settings.memo_root
                    if root is None or not str(root):
                        raise ToolError(
                            "no library configured: the server needs MEMO_ROOT (or memo_root in "
                            "config.toml) pointing at the notes folder"
                        )
                    self._library = Library(
                        root,
                        load_embedder(self.settings),
                        busy_timeout_ms=self.settings.busy_timeout_ms,
                    )
                return fn(self._library)
            except TidelineError as exc:
                hint = next((h for cls, h in _NEXT_STEP.items() if isinstance(exc, cls)), "")
                raise ToolError(f"{exc}" + (f" — next: {hint}" if hint else "")) from None

    def close(self) -> None:
        with self.lock:
            if self._library is not None:
                self._library.close()
                self._library = None


def register(server: MCPServer, settings: Settings) -> _LibraryHandle:
    """Add the library tools to `server`; returns the handle (close it on shutdown)."""
    handle = _LibraryHandle(settings)

    @server.tool(
        name="memo_search",
        annotations=ToolAnnotations(
            title="Search the notes library", read_only_hint=True, open_world_hint=False
        ),
    )
    def memo_search(
        query: str,
        path: str = "*",
        k: int = 8,
        mode: Literal["hybrid", "lex", "vec"] = "hybrid",
    ) -> dict[str, Any]:
        """Search the markdown notes by meaning and by exact words (BM25 + vectors, fused).

        `path` is a collection folder (e.g. "work/jira"), a sub-folder or one file; "*" searches
        every collection and is slow — prefer a folder (see memo_route or memo_status). Use
        mode "lex" for exact numbers, versions, host names and abbreviations, "vec" for
        paraphrases. Each hit gives `location` (path:line) to read further with your file tools,
        the heading, the score parts and up to ~1,200 characters of the section. Edits made just
        before the call are already included.
        """
        return handle.call(lambda lib: lib.search(query, path, k=k, mode=mode).to_dict())

    @server.tool(
        name="memo_status",
        annotations=ToolAnnotations(
            title="Library status", read_only_hint=True, open_world_hint=False
        ),
    )
    def memo_status(path: str | None = None) -> dict[str, Any]:
        """List the collections (name, description, files, chunks, last sync, how many notes the
        index lags behind) and the folders that are not indexed and why (no _meta.yaml, too deep,
        unreadable files). `path` limits it to one collection or folder."""
        return handle.call(lambda lib: lib.status(path))

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
    def memo_reindex(path: str, full: bool = False) -> dict[str, Any]:
        """Bring the index of `path` (a collection, folder or file; "*" for all) up to date with
        the files. Only needed when search looks stale; `full=true` throws the index away and
        rebuilds it from the markdown (slow: every note is embedded again). Never edits notes."""
        return handle.call(
            lambda lib: {"collections": [r.to_dict() for r in lib.reindex(path, full=full)]}
        )

    @server.tool(
        name="memo_route",
        annotations=ToolAnnotations(
            title="Pick collections for a question", read_only_hint=True, open_world_hint=False
        ),
    )
    def memo_route(query: str, k: int = 10, prefix: str = "") -> dict[str, Any]:
        """Which collections should a question be searched in? Returns candidate collections
        (name, path, description) best first; pass a candidate's `path` to memo_search.
        `prefix` (e.g. "work/") limits the answer to one branch of the name tree."""
        return handle.call(lambda lib: lib.route(query, k=k, prefix=prefix).to_dict())

    aliases = getattr(server, "tool_aliases", None)
    if isinstance(aliases, dict):  # the shared server renames the argument names models guess
        aliases["memo_search"] = {
            **_QUERY_ALIASES,
            **_PATH_ALIASES,
            "limit": "k",
            "top_k": "k",
            "n": "k",
            "max_results": "k",
        }
        aliases["memo_status"] = dict(_PATH_ALIASES)
        aliases["memo_reindex"] = dict(_PATH_ALIASES)
        aliases["memo_route"] = {**_QUERY_ALIASES, "limit": "k", "top_k": "k"}
    return handle


_QUERY_ALIASES = {"q": "query", "text": "query", "question": "query"}
_PATH_ALIASES = {"scope": "path", "folder": "path", "collection": "path", "file": "path"}
