"""`Library`: one library root, its collections, their indexes, search, status and routing.

This is the service API the CLI, the MCP tools and the watcher drive. It holds one open index per
collection (opened lazily) and a cached layout of the tree that is refreshed on demand.

Search always catches up first: a quick stat pass (and a hash for anything whose stat changed)
over the target path indexes edits made just before the call, so "write, then search" works
without waiting for the watcher.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tideline.errors import InvalidInput
from tideline.library._errors import LinkOutside, NoCollection
from tideline.library._index import MAX_FILE_BYTES, CollectionIndex, Progress, SyncReport
from tideline.library._index_dir import IndexDirRefused, claim_index_dir
from tideline.library._layout import Collection, Layout, NoteStat, Problem, scan_library, stat_notes
from tideline.library._meta import CollectionMeta, read_meta, write_meta
from tideline.library._paths import INDEX_DIR, MAX_DEPTH, META_FILE, resolve_inside
from tideline.library._registry import (
    load_registry,
    registry_from_layout,
    save_registry,
)
from tideline.library._router import Router, RouteResult
from tideline.pathnames import shown
from tideline.search import MODES, Hit, bound_query, valid_text

RRF_K = 60
TEXT_CHARS = 1200
LAYOUT_TTL = 10.0


@dataclass
class SearchHit:
    """One chunk found: where it is, what it says, and how its score was made."""

    collection: str
    path: str
    line: int
    heading: str
    text: str
    score: float
    mtime: float
    lex_rank: int | None = None
    lex_score: float | None = None
    vec_rank: int | None = None
    vec_distance: float | None = None

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["location"] = self.location
        return d


@dataclass
class SearchResult:
    query: str
    mode: str
    scope: str
    collections: list[str]
    hits: list[SearchHit]
    expensive: bool = False
    caught_up: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["hits"] = [h.to_dict() for h in self.hits]
        return d


@dataclass
class _Target:
    """Where a search or reindex looks: collections, plus a path filter inside them."""

    scope: str
    parts: list[tuple[Collection, str, str]]  # (collection, kind: all|file|under, rel path)
    expensive: bool = False


def _clip(text: str, limit: int = TEXT_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit * 0.8 else limit].rstrip() + " …"


def literal_dashes(query: str) -> str:
    """Notes are full of command lines: `--clean` or `-t` is an option to find, never an
    exclusion (which is what a leading `-` means to `parse_query`)."""
    return " ".join(w.lstrip("-") if w.startswith("-") else w for w in query.split())


def _competition_ranks(values: list[float]) -> list[int]:
    """Ranks where equal values share a rank (1, 2, 2, 4): equal matches fuse to equal scores,
    so the mtime tiebreak can decide between identical notes."""
    ranks, prev, rank = [], None, 0
    for n, v in enumerate(values, start=1):
        key = round(v, 9)
        if key != prev:
            rank, prev = n, key
        ranks.append(rank)
    return ranks


class Library:
    """A library root with its collections."""

    def __init__(
        self,
        root: Path | str,
        embedder: Any | None = None,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        busy_timeout_ms: int = 5000,
    ):
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise InvalidInput(
                f"library root {self.root} is not a folder; pass --root or set MEMO_ROOT"
            )
        self.embedder = embedder if embedder is not None and getattr(embedder, "dim", 0) else None
        self.max_file_bytes = max_file_bytes
        self.busy_timeout_ms = busy_timeout_ms
        self._layout: Layout | None = None
        self._layout_at = 0.0
        self._indexes: dict[str, CollectionIndex] = {}
        self._executor: ThreadPoolExecutor | None = None

    # -- layout and indexes -----------------------------------------------------------------
    def layout(self, *, refresh: bool = False) -> Layout:
        if refresh or self._layout is None or time.monotonic() - self._layout_at > LAYOUT_TTL:
            self._layout = scan_library(self.root)
            self._layout_at = time.monotonic()
            alive = {c.rel: c for c in self._layout.collections}
            for rel in list(self._indexes):
                idx = self._indexes[rel]
                if rel not in alive or alive[rel].meta != idx.collection.meta:
                    idx.close()
                    del self._indexes[rel]
        return self._layout

    def index_of(self, collection: Collection) -> CollectionIndex:
        idx = self._indexes.get(collection.rel)
        if idx is None:
            idx = CollectionIndex(
                collection,
                self.embedder,
                max_file_bytes=self.max_file_bytes,
                busy_timeout_ms=self.busy_timeout_ms,
            )
            self._indexes[collection.rel] = idx
        return idx

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memo-query")
        return self._executor

    def close(self) -> None:
        for idx in self._indexes.values():
            idx.close()
        self._indexes.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _target(self, path: str | None) -> _Target:
        raw = (path or "*").strip()
        layout = self.layout()
        if raw in ("*", "", "."):
            return _Target("*", [(c, "all", "") for c in layout.collections], expensive=True)
        resolved = resolve_inside(self.root, raw)
        if not resolved.exists():
            raise NoCollection(f"{shown(raw)}: no such file or folder in the library {self.root}")
        if resolved == self.root:
            return _Target("*", [(c, "all", "") for c in layout.collections], expensive=True)
        rel = resolved.relative_to(self.root).as_posix()
        owner = layout.collection_of(resolved)
        if owner is None and (resolved / META_FILE).exists():
            owner = self.layout(refresh=True).collection_of(resolved)
        if resolved.is_file():
            if owner is None:
                raise NoCollection(
                    f"{rel} is not in a collection; run `memo status` to see why "
                    "(no _meta.yaml above it, too deep, or the root inbox)"
                )
            return _Target(rel, [(owner, "file", rel)])
        parts: list[tuple[Collection, str, str]] = []
        if owner is not None:
            parts.append((owner, "all" if owner.path == resolved else "under", rel))
        for c in layout.collections:
            if resolved in c.path.parents:
                parts.append((c, "all", ""))
        if not parts:
            raise NoCollection(
                f"{rel} holds no collection; add a _meta.yaml with "
                f"`memo init-collection {rel} --description ...` or see `memo status`"
            )
        return _Target(rel, parts)

    # -- indexing ---------------------------------------------------------------------------
    def index(self, *, full: bool = False, progress: Progress | None = None) -> list[SyncReport]:
        """Sync every collection and refresh `_registry.yaml`."""
        layout = self.layout(refresh=True)
        reports = []
        for c in layout.collections:
            idx = self.index_of(c)
            if full:
                idx.rebuild()
            reports.append(idx.sync(full=full, progress=_tagged(progress, c.rel)))
        self._save_registry(layout, reports)
        return reports

    def reindex(
        self, path: str | None, *, full: bool = False, progress: Progress | None = None
    ) -> list[SyncReport]:
        """Catch up (or, with `full`, rebuild) the collections under `path`."""
        self.layout(refresh=True)
        target = self._target(path)
        reports = []
        for c, kind, rel in target.parts:
            idx = self.index_of(c)
            if full and kind == "all":
                idx.rebuild()
            if kind == "file":
                reports.append(idx.sync([self.root / rel], full=full))
            else:
                under = rel if kind == "under" else None
                reports.append(idx.sync(under=under, full=full, progress=_tagged(progress, c.rel)))
        if target.scope == "*":
            self._save_registry(self.layout(), reports)
        return reports

    def sync_files(self, paths: Iterable[Path]) -> list[SyncReport]:
        """Index exactly these files (the watcher's debounced batch). Each is hashed even when
        its stat looks unchanged (`cp -p`, `touch -r`): an event was seen, the hash decides."""
        layout = self.layout()
        groups: dict[str, list[Path]] = {}
        for p in paths:
            c = layout.collection_of(p)
            if c is not None:
                groups.setdefault(c.rel, []).append(p)
        by_rel = layout.by_rel()
        return [self.index_of(by_rel[rel]).sync(ps, verify=True) for rel, ps in groups.items()]

    def _save_registry(self, layout: Layout, reports: list[SyncReport]) -> None:
        entries = registry_from_layout(layout, load_registry(self.root))
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        by_rel = {r.collection: r for r in reports}
        for name, e in list(entries.items()):
            report = by_rel.get(e.path)
            if report is not None and (not report.noop or e.files is None):
                st = self.index_of(layout.by_rel()[e.path]).status()
                entries[name] = type(e)(
                    e.name, e.path, e.description, e.tags, st["files"], st["chunks"], now
                )
        save_registry(self.root, entries)  # unchanged content is not rewritten

    # -- search -----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        path: str | None = "*",
        *,
        k: int = 8,
        mode: str = "hybrid",
        catch_up: bool = True,
    ) -> SearchResult:
        """Search `path` (a file, a folder, or "*" for every collection).

        With `catch_up` (the default) a stat pass over the target first indexes whatever
        changed, so an edit made just before the call is found; bulk callers that run a watcher
        may turn it off to skip the per-file stat.
        """
        started = time.perf_counter()
        if mode not in MODES:
            raise InvalidInput(f"mode {mode!r} is not one of {', '.join(MODES)}")
        if not query or not query.strip():
            raise InvalidInput("query is empty; pass the words or the question to search for")
        query = valid_text(query)
        k = max(1, min(int(k), 100))
        target = self._target(path)
        query, cut = bound_query(query)
        result = SearchResult(query, mode, target.scope, [], [], expensive=target.expensive)
        if cut:
            result.warnings.append(cut)
        if target.expensive:
            result.warnings.append(
                f"searched all {len(target.parts)} collections (path '*'): the expensive path; "
                "pass a collection folder to search one"
            )
        want_vec = mode in ("hybrid", "vec") and self.embedder is not None
        if mode == "vec" and self.embedder is None:
            result.warnings.append("no embedder configured: vector search returns nothing")
        # The query embedding (C code, GIL released) overlaps the stat catch-up.
        pending_vec = self._pool().submit(self.embedder.embed_query, query) if want_vec else None
        depth = max(k * 4, 40)
        lex_query = literal_dashes(query)
        lex_all: list[tuple[float, int, Hit]] = []
        vec_all: list[tuple[float, int, Hit]] = []
        owners: list[tuple[CollectionIndex, str]] = []
        for c, kind, rel in target.parts:
            idx = self.index_of(c)
            if catch_up:
                if kind == "file":
                    report = idx.sync([self.root / rel])
                else:
                    report = idx.sync(under=rel if kind == "under" else None)
                result.caught_up += report.changed + report.removed
                result.warnings.extend(report.warnings)
            result.collections.append(c.rel)
            owners.append((idx, c.rel))
        qvec: np.ndarray | None = pending_vec.result() if pending_vec is not None else None
        for n, ((idx, _), (_, kind, rel)) in enumerate(zip(owners, target.parts, strict=True)):
            where, params = _filter(kind, rel)
            if mode in ("hybrid", "lex"):
                for h in idx.lexical(lex_query, depth, where, params):
                    lex_all.append((h.lex_score or 0.0, n, h))
            if qvec is not None and mode in ("hybrid", "vec"):
                for h in idx.vector(qvec, depth, where, params):
                    vec_all.append((h.vec_distance or 0.0, n, h))
        lex_all.sort(key=lambda t: -t[0])
        vec_all.sort(key=lambda t: t[0])
        fused: dict[tuple[int, int], dict[str, Any]] = {}
        for lst, kind_name in ((lex_all, "lex"), (vec_all, "vec")):
            ranks = _competition_ranks([t[0] for t in lst])
            for rank, (value, n, h) in zip(ranks, lst, strict=True):
                slot = fused.setdefault((n, h.id), {"score": 0.0})
                slot["score"] += 1.0 / (RRF_K + rank)
                if kind_name == "lex":
                    slot["lex_rank"], slot["lex_score"] = rank, round(value, 6)
                else:
                    slot["vec_rank"], slot["vec_distance"] = rank, round(value, 6)
        rows: dict[tuple[int, int], dict[str, Any]] = {}
        for n, (idx, _) in enumerate(owners):
            ids = [i for (m, i) in fused if m == n]
            for i, row in idx.chunk_rows(ids).items():
                rows[(n, i)] = row
        ordered = sorted(
            (key for key in fused if key in rows),
            key=lambda key: (-round(fused[key]["score"], 12), -rows[key]["mtime"], key),
        )
        for key in ordered[:k]:
            row, parts = rows[key], fused[key]
            result.hits.append(
                SearchHit(
                    collection=owners[key[0]][1],
                    path=row["path"],
                    line=row["line"],
                    heading=row["heading"],
                    text=_clip(row["text"]),
                    score=round(parts["score"], 6),
                    mtime=row["mtime"],
                    lex_rank=parts.get("lex_rank"),
                    lex_score=parts.get("lex_score"),
                    vec_rank=parts.get("vec_rank"),
                    vec_distance=parts.get("vec_distance"),
                )
            )
        result.seconds = round(time.perf_counter() - started, 4)
        return result

    # -- status -----------------------------------------------------------------------------
    def status(self, path: str | None = None) -> dict[str, Any]:
        """What is indexed, when, and whether the index lags behind the files."""
        layout = self.layout(refresh=True)
        target = self._target(path) if path not in (None, "", "*", ".") else None
        cols = [c for c, _, _ in target.parts] if target else layout.collections
        out: dict[str, Any] = {
            "root": str(self.root),
            "collections": [],
            "problems": [p.__dict__ for p in layout.problems],
            "embedder": self.embedder.model_id if self.embedder is not None else "none",
        }
        for c in cols:
            walk: list[Problem] = []
            notes = stat_notes(c, walk)
            entry: dict[str, Any] = {
                "name": c.name,
                "path": c.rel,
                "description": c.meta.description,
                "indexed": False,
                "skipped": [
                    {"path": p.path, "kind": p.kind, "reason": LinkOutside.REASON}
                    for p in walk
                    if p.kind == "link-outside"
                ],
            }
            try:
                entry["indexed"] = (
                    claim_index_dir(c.index_dir, create=False)
                    and (c.index_dir / "index.db").exists()
                )
            except IndexDirRefused as exc:
                entry["error"] = str(exc)
            if entry["indexed"]:
                idx = self.index_of(c)
                listed = entry["skipped"]
                entry.update(idx.status())
                seen = {s["path"] for s in entry["skipped"]}
                entry["skipped"] += [s for s in listed if s["path"] not in seen]
                entry["behind"] = _behind(idx, notes)
            out["collections"].append(entry)
        return out

    # -- routing and collections ------------------------------------------------------------
    def route(self, query: str, *, k: int = 10, prefix: str = "", **thresholds: int) -> RouteResult:
        entries = load_registry(self.root)
        if not entries:
            layout = self.layout(refresh=True)
            entries = registry_from_layout(layout)
            if entries:
                save_registry(self.root, entries)
        router = Router(self.root, self.embedder, entries=entries, **thresholds)
        try:
            return router.route(query, k=k, prefix=prefix)
        finally:
            router.close()

    def init_collection(
        self,
        path: str,
        description: str,
        *,
        tags: Iterable[str] = (),
        name: str = "",
        embedder: str = "",
    ) -> Collection:
        """Create `_meta.yaml` for a folder (created if needed) and register it."""
        folder = resolve_inside(self.root, path)
        rel = folder.relative_to(self.root).as_posix() if folder != self.root else ""
        depth = len(Path(rel).parts) if rel else 0
        if not rel or depth > MAX_DEPTH:
            raise InvalidInput(
                f"{path!r}: a collection is a folder 1 to {MAX_DEPTH} levels below the root "
                f"{self.root}; pick a path like 'infra' or 'work/jira'"
            )
        if INDEX_DIR in Path(rel).parts or any(p.startswith(".") for p in Path(rel).parts):
            raise InvalidInput(f"{path!r}: hidden folders cannot be collections")
        if not description.strip():
            raise InvalidInput("--description is required: one line saying what the folder holds")
        if (folder / META_FILE).exists():
            raise InvalidInput(
                f"{rel}/{META_FILE} already exists; edit it by hand to change the description"
            )
        folder.mkdir(parents=True, exist_ok=True)
        meta = CollectionMeta(name.strip() or rel, description.strip(), tuple(tags))
        if embedder:
            meta = CollectionMeta(meta.name, meta.description, meta.tags, embedder)
        write_meta(folder, meta)
        read_meta(folder, default_name=rel, root=self.root)  # what we wrote must parse
        layout = self.layout(refresh=True)
        save_registry(self.root, registry_from_layout(layout, load_registry(self.root)))
        return layout.by_rel()[rel]


def _filter(kind: str, rel: str) -> tuple[str | None, tuple[Any, ...]]:
    if kind == "file":
        return "rowid IN (SELECT id FROM chunks WHERE path = ?)", (rel,)
    if kind == "under":
        lo = rel.rstrip("/") + "/"
        return "rowid IN (SELECT id FROM chunks WHERE path >= ? AND path < ?)", (lo, lo[:-1] + "0")
    return None, ()


def _behind(idx: CollectionIndex, notes: list[NoteStat]) -> int:
    """Notes whose (mtime, size, ctime, inode) differ from the index, plus notes gone."""
    known = idx.stamps()
    lag = sum(1 for rel, _, *stamp in notes if known.get(rel) != tuple(stamp))
    return lag + len(known.keys() - {n[0] for n in notes})


def _tagged(progress: Progress | None, name: str) -> Progress | None:
    if progress is None:
        return None
    return lambda phase, done, total: progress(f"{name}: {phase}", done, total)
