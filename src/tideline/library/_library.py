"""`Library`: one library root, its collections, their indexes, search, status and routing.

This is the service API the CLI, the MCP tools and the watcher drive. It holds one open index per
collection (opened lazily) and a cached layout of the tree that is refreshed on demand.

Search always catches up first, so "write, then search" works: a quick stat pass (and a hash
for anything whose stat changed) over the target path indexes edits made just before the call.
That pass costs ~5 µs per note (40 ms at 7,425 notes), so a whole collection's pass is redone
only when it is `recheck` seconds old (1 s) or one of the folders it listed changed (a note
added, removed, renamed or saved by replacing it); in between a search stats the folders only
and says how old the notes' check is (`fresh_by="folders"`, `stat_age`). With
`catch_up="auto"` (the default) a running watcher replaces the pass: this process's watcher
first syncs the events it has seen (`Watcher.settle`), another process's watcher is trusted
while its heartbeat is fresh.

An index is disposable: damage met in the middle of a search, a sync or `status` (a bad page that
opening never reads) throws that collection's index away, rebuilds it from the notes and runs the
call again (`_rebuilding`), with one warning instead of an error.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar, cast

from tideline.clock import now_text, system_clock
from tideline.embed import Embedder
from tideline.errors import (
    BadMeta,
    DatabaseDamaged,
    IndexDirRefused,
    InvalidInput,
    LinkOutside,
    NoCollection,
    TidelineError,
)
from tideline.library import _heartbeat
from tideline.library._collection_index import MAX_FILE_BYTES, CollectionIndex, Progress, SyncReport
from tideline.library._index_dir import claim_index_dir
from tideline.library._layout import Collection, Layout, Problem, scan_library, stat_notes
from tideline.library._meta import CollectionMeta, read_meta, write_meta
from tideline.library._notes import (
    NoteText,
    NoteWritten,
    note_target,
    open_write_keys,
    read_note,
    write_note,
    write_note_once,
)
from tideline.library._paths import (
    INDEX_DIR,
    MAX_DEPTH,
    MAX_K,
    META_FILE,
    REGISTRY_FILE,
    resolve_inside,
)
from tideline.library._registry import (
    load_registry,
    registry_from_layout,
    save_registry,
)
from tideline.library._router import Candidate, Router, RouteResult
from tideline.pathnames import shown
from tideline.search import (
    MODES,
    Hit,
    Mode,
    Policy,
    Scope,
    SearchResult,
    bound_query,
    by_best,
    check_floor,
    pending_vector,
    resolve_floor,
    retrieve,
    valid_text,
)
from tideline.store import WriteKeys, check_key

TEXT_CHARS = 1200
LAYOUT_TTL = 10.0
CATCH_UP = ("auto", "stat")
MAX_RECHECK = 3600.0


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


F = TypeVar("F", bound=Callable[..., Any])


def _serialised(method: F) -> F:
    """One call of the library's API at a time per `Library`: the MCP tools and the web panel
    call it from worker threads, and its open indexes, layout and router are one set of state.
    The watcher's syncs run beside them, as before (their files' connections wait their turn)."""

    @wraps(method)
    def one_at_a_time(self: Library, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return cast(F, one_at_a_time)


def _rebuilding(method: F) -> F:
    """Damage met in the middle of `method` in one of this library's indexes: throw that index
    away, build the collection again from its notes and run `method` once more."""

    @wraps(method)
    def again(self: Library, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except DatabaseDamaged as exc:
            idx = next((i for i in self._indexes.values() if i.drop_damaged(exc)), None)
            if idx is None:
                raise
            idx.warnings.extend(idx.sync().warnings)  # said by the next sync (the catch-up)
            return method(self, *args, **kwargs)

    return cast(F, again)


class Library:
    """A library root with its collections. What settings decide (the ranking policy, keys,
    catch-up, recheck, floor, busy timeout) is passed in: `tideline.app.library_from` /
    `library_options` build it."""

    def __init__(
        self,
        root: Path | str,
        embedder: Embedder | None = None,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        busy_timeout_ms: int,
        policy: Policy,
        keys: str,
        catch_up: str,
        recheck: float,
        min_score: str | float,
    ):
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise InvalidInput(
                f"library root {self.root} is not a folder; pass --root or set MEMO_ROOT"
            )
        self.embedder = embedder if embedder is not None and embedder.dim > 0 else None
        self.max_file_bytes = max_file_bytes
        self.busy_timeout_ms = busy_timeout_ms
        if policy.fusion != "rrf":  # keys are collapsed to chunks per list, then rank-fused
            raise InvalidInput(f"library fusion {policy.fusion!r}: the library fuses by rrf only")
        self.policy = policy
        self.keys = keys
        if catch_up not in CATCH_UP:
            raise InvalidInput(f"catch_up={catch_up!r}; use one of {', '.join(CATCH_UP)}")
        self.catch_up = catch_up
        if not 0.0 <= recheck <= MAX_RECHECK:
            raise InvalidInput(
                f"library_recheck={recheck!r}; use seconds from 0 (stat every note before every"
                f" search) to {MAX_RECHECK:g}"
            )
        self.recheck = recheck
        if not 0.0 <= policy.trust_floor <= 1.0:
            raise InvalidInput(
                f"library_lex_floor={policy.trust_floor!r}; use a weight from 0 to 1"
            )
        model = self.embedder.model_id if self.embedder is not None else None
        self.min_score = resolve_floor(min_score, model, "note")
        self.watcher: Any = None  # a running `Watcher` registers itself here
        self._layout: Layout | None = None
        self._layout_at = 0.0
        self._indexes: dict[str, CollectionIndex] = {}
        self._router: Router | None = None
        self._router_stamp: tuple[int, int, int] | None = None
        self._keys: WriteKeys | None = None  # opened by the first keyed write
        self._lock = threading.RLock()  # `_serialised`: reentrant, one call may call another

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
                keys=self.keys,
            )
            self._indexes[collection.rel] = idx
        return idx

    def close(self) -> None:
        for idx in self._indexes.values():
            idx.close()
        self._indexes.clear()
        if self._router is not None:
            self._router.close()
            self._router, self._router_stamp = None, None
        if self._keys is not None:
            self._keys.db.close()
            self._keys = None

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _target(self, path: str | None) -> _Target:
        raw = (path or "*").strip()
        layout = self.layout()
        if raw in ("*", "", "."):
            return self._everything(layout)
        resolved = resolve_inside(self.root, raw)
        if not resolved.exists():
            raise NoCollection(f"{shown(raw)}: no such file or folder in the library {self.root}")
        if resolved == self.root:
            return self._everything(layout)
        rel = resolved.relative_to(self.root).as_posix()
        owner = layout.collection_of(resolved)
        if owner is None and (resolved / META_FILE).exists():
            layout = self.layout(refresh=True)
            owner = layout.collection_of(resolved)
        broken = layout.broken_meta(rel) if owner is None else None
        if broken is not None:
            raise BadMeta(f"{rel} is not searchable: {broken.message}")
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

    def _everything(self, layout: Layout) -> _Target:
        """Every collection; none at all is an error that says what is there instead."""
        if not layout.collections:
            fixes = [p.message for p in self.unseen()] or [
                "make a folder of notes one with `memo init-collection FOLDER --description ...`"
            ]
            raise NoCollection(
                f"the library {self.root} has no collections: {'; '.join(fixes[:3])}"
            )
        return _Target("*", [(c, "all", "") for c in layout.collections], expensive=True)

    def unseen(self) -> list[Problem]:
        """Folders of notes that search and routing cannot see (no or a bad `_meta.yaml`),
        each with its fix, from the last scan of the tree."""
        return [p for p in self.layout().problems if p.kind in ("unregistered", "bad-meta")]

    # -- indexing ---------------------------------------------------------------------------
    @_rebuilding
    def index(self, *, full: bool = False, progress: Progress | None = None) -> list[SyncReport]:
        """Sync every collection and refresh `_registry.yaml`."""
        layout = self.layout(refresh=True)
        reports: list[SyncReport] = []
        for c in layout.collections:
            idx = self.index_of(c)
            if full:
                idx.rebuild()
            progress_c = _tagged(progress, c.rel)
            reports.append(idx.sync(full=full, progress=progress_c, embed=_embedding(reports)))
        self._save_registry(layout, reports)
        return reports

    @_serialised
    @_rebuilding
    def reindex(
        self, path: str | None, *, full: bool = False, progress: Progress | None = None
    ) -> list[SyncReport]:
        """Catch up (or, with `full`, rebuild) the collections under `path`."""
        self.layout(refresh=True)
        target = self._target(path)
        reports: list[SyncReport] = []
        for c, kind, rel in target.parts:
            idx = self.index_of(c)
            if full and kind == "all":
                idx.rebuild()
            embed = _embedding(reports)
            if kind == "file":
                reports.append(idx.sync([self.root / rel], full=full, embed=embed))
            else:
                under = rel if kind == "under" else None
                progress_c = _tagged(progress, c.rel)
                reports.append(idx.sync(under=under, full=full, progress=progress_c, embed=embed))
        if target.scope == "*":
            self._save_registry(self.layout(), reports)
        return reports

    @_rebuilding
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
        reports: list[SyncReport] = []
        for rel, ps in groups.items():
            idx = self.index_of(by_rel[rel])
            reports.append(idx.sync(ps, verify=True, embed=_embedding(reports)))
        return reports

    def _save_registry(self, layout: Layout, reports: list[SyncReport]) -> None:
        entries = registry_from_layout(layout, load_registry(self.root))
        now = now_text(system_clock)  # the machine's: when these files were indexed
        by_rel = {r.collection: r for r in reports}
        for name, e in list(entries.items()):
            report = by_rel.get(e.path)
            if report is not None and (not report.noop or e.files is None):
                st = self.index_of(layout.by_rel()[e.path]).status()
                entries[name] = type(e)(
                    e.name, e.path, e.description, e.tags, st["files"], st["chunks"], now
                )
        save_registry(self.root, entries)  # unchanged content is not rewritten
        self._router_stamp = None

    # -- search -----------------------------------------------------------------------------
    @_serialised
    @_rebuilding
    def search(
        self,
        query: str,
        path: str | None = "*",
        *,
        k: int = 8,
        mode: str = "hybrid",
        catch_up: bool = True,
        min_score: float | None = None,
    ) -> SearchResult:
        """Search `path` (a file, a folder, or "*" for every collection): the chunks best first
        by relevance, none below the relevance floor (`min_score`, default the library's).

        With `catch_up` (the default) the index is brought up to date first, so an edit made
        just before the call is found: by a running watcher when the library's `catch_up` is
        "auto" and one runs, else by a stat pass over the target. `catch_up=False` skips both.
        """
        started = time.perf_counter()
        if mode not in MODES:
            raise InvalidInput(f"mode {mode!r} is not one of {', '.join(MODES)}")
        if not query or not query.strip():
            raise InvalidInput("query is empty; pass the words or the question to search for")
        floor = self.min_score if min_score is None else check_floor(min_score)
        query = valid_text(query)
        _check_k(k)
        target = self._target(path)
        query, cut = bound_query(query)
        warnings = [cut] if cut else []
        if target.expensive:
            warnings += [f"not searched: {p.message}" for p in self.unseen()]
        # The query embedding (C code, GIL released) overlaps the stat catch-up; an embedder
        # that is down becomes a warning and a lexical search, never an error.
        pending = pending_vector(self.embedder if mode != "lex" else None, query)
        owners: list[CollectionIndex] = []
        scopes: list[Scope] = []
        reports: list[SyncReport] = []
        fresh_by = self._watched() if catch_up else "none"
        stats, caught_up, stat_age = fresh_by == "stat", 0, 0.0
        for c, kind, rel in target.parts:
            idx = self.index_of(c)
            age = idx.checked_ago(self.recheck) if stats and kind == "all" else None
            if age is not None:  # its folders are as listed and its notes were statted `age` ago
                fresh_by, stat_age = "folders", max(stat_age, age)
            elif stats:
                embed = _embedding(reports)
                if kind == "file":
                    report = idx.sync([self.root / rel], embed=embed)
                else:
                    report = idx.sync(under=rel if kind == "under" else None, embed=embed)
                reports.append(report)
                caught_up += report.changed + report.removed
                warnings.extend(report.warnings)
            owners.append(idx)
            scopes.append(idx.path_filter(kind, rel))
        rows: dict[tuple[int, int], dict[str, Any]] = {}

        def recency(keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
            """The chunks' rows (kept for the hits), their mtimes for equal scores."""
            for n, idx in enumerate(owners):
                ids = {i for s, i in keys if s == n and (s, i) not in rows}
                rows.update(((n, i), row) for i, row in idx.chunk_rows(ids).items())
            return {key: rows[key]["mtime"] for key in keys if key in rows}

        found = retrieve(
            scopes,
            query,
            pending,
            k,
            cast(Mode, mode),
            replace(self.policy, floor=floor),
            parents=lambda n, ids: owners[n].parents(ids),
            recency=recency,
        )
        hits: list[Hit] = []
        for h in found.hits:
            row = rows.get(h.key)
            if row is None:  # replaced meanwhile
                continue
            key = rows.get((h.source, h.part)) if h.part is not None else None
            if key is None and h.part is not None:
                key = owners[h.source].chunk_rows([h.part]).get(h.part)
            hits.append(
                replace(
                    h,
                    type="note",
                    collection=owners[h.source].collection.rel,
                    path=row["path"],
                    line=(key or row)["line"],
                    heading=row["heading"],
                    match=_clip(key["text"]) if key is not None else None,
                    text=_clip(row["text"]),
                    mtime=row["mtime"],
                )
            )
            if len(hits) == k:
                break
        return SearchResult(
            hits,
            found.mode,
            list(dict.fromkeys(warnings + found.warnings)),
            floor,
            found.left_out,
            query=query,
            scope=target.scope,
            collections=[c.rel for c, _, _ in target.parts],
            expensive=target.expensive,
            caught_up=caught_up,
            fresh_by=fresh_by,
            stat_age=round(stat_age, 3),
            seconds=round(time.perf_counter() - started, 4),
            signals=found.signals,
        )

    def _watched(self) -> str:
        """ "watcher" when a running watcher keeps the index current (this process's has synced
        the events it saw), else "stat": the caller stats the notes itself."""
        if self.catch_up != "auto":
            return "stat"
        if self.watcher is not None and self.watcher.alive:
            self.watcher.settle()
            return "watcher"
        return "watcher" if _heartbeat.alive(self.root) else "stat"

    # -- one note ---------------------------------------------------------------------------
    @_serialised
    def write(
        self, path: str, text: str, *, append: bool = False, idempotency_key: str | None = None
    ) -> NoteWritten:
        """Create the note `path` in a collection (or append to it), then index it, so the next
        search finds it (see `_notes` for the rules). Sent again with its idempotency key, the
        first answer comes back (`replayed`) and nothing is appended twice."""
        key = check_key(idempotency_key)
        target, collection = note_target(self.root, self.layout(refresh=True), path)
        args = (self.root, target, collection, text)
        if key is None:
            written = write_note(*args, append=append, max_bytes=self.max_file_bytes)
        else:
            if self._keys is None:
                self._keys = open_write_keys(self.root, self.busy_timeout_ms)
            written = write_note_once(
                self._keys, key, *args, append=append, max_bytes=self.max_file_bytes
            )
        self._sync_note(collection, target)
        return written

    @_rebuilding
    def _sync_note(self, collection: Collection, note: Path) -> None:
        self.index_of(collection).sync([note])

    @_serialised
    def read(self, path: str, start: int = 1, end: int | None = None) -> NoteText:
        """Lines `start`–`end` of a note (or `path:line` from a search hit)."""
        return read_note(self.root, path, start, end, max_bytes=self.max_file_bytes)

    # -- status -----------------------------------------------------------------------------
    @_serialised
    @_rebuilding
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
                entry["behind"] = idx.behind(notes)
            out["collections"].append(entry)
        return out

    # -- routing and collections ------------------------------------------------------------
    @_serialised
    def route(self, query: str, *, k: int = 10, prefix: str = "") -> RouteResult:
        """Which collections to search for `query` (see `Router`)."""
        _check_k(k)
        query, prefix = valid_text(query), valid_text(prefix or "")  # lone surrogates: U+FFFD
        result = self._routes().route(query, k=k, prefix=prefix)
        if result.strategy == "flat" and query.strip() and len(result.candidates) > 1:
            result.candidates = self._by_content(query, result.candidates)
        return result

    def _by_content(self, query: str, candidates: list[Candidate]) -> list[Candidate]:
        """Flat routing, re-ranked by content: a collection is as relevant as its description
        or its most relevant note, whichever is more (one search of every note, which a
        handful of collections makes cheap), so a question answered by a note whose
        collection's description never says so still finds it."""
        try:
            hits = self.search(query, "*", k=MAX_K, catch_up=False, min_score=0.0).hits
        except TidelineError:  # no collections on disk yet (the registry is older): as routed
            return candidates
        by_path = {c.path: c for c in candidates}
        ranked = by_best(
            [(c.path, c.score) for c in candidates], hits, lambda h: h.collection or ""
        )
        return [replace(by_path[path], score=round(score, 6)) for path, score in ranked]

    def _routes(self) -> Router:
        """The router, kept between calls: parsing `_registry.yaml` is most of a route at 5,000
        collections, so it is re-read only when the file changed (or was rewritten by us)."""
        stamp = _stamp(self.root / REGISTRY_FILE)
        if self._router is not None and stamp is not None and stamp == self._router_stamp:
            return self._router
        entries = load_registry(self.root)
        if not entries:
            entries = registry_from_layout(self.layout(refresh=True))
            if entries:
                save_registry(self.root, entries)
                stamp = _stamp(self.root / REGISTRY_FILE)
        if self._router is None:
            self._router = Router(
                self.root, self.embedder, entries=entries, centre=self.policy.centre
            )
        else:
            self._router.entries = entries
        self._router_stamp = stamp if entries else None  # an empty registry: look again next time
        return self._router

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
        self._router_stamp = None
        return layout.by_rel()[rel]


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k={k!r}; ask for 1–{MAX_K} results")


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """(mtime_ns, size, inode) of a file, None when it is missing: an atomic rewrite is a new
    inode, so even a same-size rewrite within one clock tick is seen."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _embedding(reports: list[SyncReport]) -> bool:
    """Whether the next sync of one call should embed: not once the embedder failed in this
    call (an endpoint that is down would cost its timeout and retries once per collection)."""
    return not any(r.vectors_pending for r in reports)


def _tagged(progress: Progress | None, name: str) -> Progress | None:
    if progress is None:
        return None
    return lambda phase, done, total: progress(f"{name}: {phase}", done, total)
