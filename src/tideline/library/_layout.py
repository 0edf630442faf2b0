"""The shape of a library on disk, found by walking it.

    <root>/_registry.yaml          written by memo; a listing for the router, never the truth
    <root>/inbox.md                drafts; never indexed
    <root>/<a>/_meta.yaml          a collection at depth 1
    <root>/<a>/<b>/_meta.yaml      a collection at depth 2 (a nested one owns its own folder)
    <root>/<a>/**/*.md             notes of the nearest collection above them, down to depth 2

Rules: dot-folders (`.memo`, `.git`) are skipped; folders deeper than two levels are reported and
not indexed; a folder with notes but no `_meta.yaml` above it is reported as unregistered;
symlinks that lead out of the root are reported and not followed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tideline.errors import BadMeta
from tideline.library._meta import CollectionMeta, read_meta
from tideline.library._paths import INBOX_FILE, INDEX_DIR, MAX_DEPTH, META_FILE, is_hidden


@dataclass(frozen=True)
class Collection:
    """A folder with a `_meta.yaml`: the unit of indexing and routing."""

    root: Path
    path: Path
    rel: str
    meta: CollectionMeta

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def index_dir(self) -> Path:
        return self.path / INDEX_DIR


@dataclass(frozen=True)
class Problem:
    """Something in the library that is not indexed, and why."""

    path: str
    kind: str  # unregistered | too-deep | bad-meta | outside-collection | link-outside | skipped
    message: str


@dataclass
class Layout:
    """Collections and problems found under one root."""

    root: Path
    collections: list[Collection] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def by_rel(self) -> dict[str, Collection]:
        return {c.rel: c for c in self.collections}

    def broken_meta(self, rel: str) -> Problem | None:
        """The bad `_meta.yaml` problem of `rel` (a folder or file) or of a folder above it."""
        for p in self.problems:
            if p.kind == "bad-meta" and (rel == p.path or rel.startswith(p.path + "/")):
                return p
        return None

    def collection_of(self, path: Path) -> Collection | None:
        """The nearest collection containing `path` (a file or folder), or None."""
        path = path.resolve()
        best: Collection | None = None
        for c in self.collections:
            if (path == c.path or c.path in path.parents) and (
                best is None or len(c.path.parts) > len(best.path.parts)
            ):
                best = c
        return best


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def scan_library(root: Path) -> Layout:
    """Walk the whole library once: find collections and report what will not be indexed."""
    root = root.resolve()
    layout = Layout(root)
    _walk(root, root, 0, None, layout, notes=None)
    layout.collections.sort(key=lambda c: c.rel)
    return layout


NoteStat = tuple[str, str, float, int, int, int]  # (rel, absolute path, mtime, size, ctime_ns, ino)
FolderStamp = tuple[int, int, int]  # (mtime_ns, ctime_ns, ino) of a folder


def folder_stamp(path: str) -> FolderStamp | None:
    """What changes when an entry of the folder is added, removed or renamed (None: gone)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def stat_notes(
    collection: Collection,
    problems: list[Problem] | None = None,
    folders: dict[str, FolderStamp | None] | None = None,
) -> list[NoteStat]:
    """The notes of one collection with their stat, in one pass of `os.scandir` (unsorted).

    This runs before every search that re-checks every note (the catch-up), so the loop is kept
    lean: no pathlib, one stat per note, symlinks checked only when the entry is one. Thousands
    of files cost a few milliseconds over the stat system calls themselves. `folders` receives
    the stamp of every folder listed, taken before it is listed: a later change to its entries
    changes the stamp (`CollectionIndex.checked_ago`).
    """
    root = str(collection.root)
    inside = root + os.sep
    cut = len(inside)
    base = len(collection.path.relative_to(collection.root).parts)
    out: list[NoteStat] = []
    append = out.append
    stack: list[tuple[str, int, bool]] = [(str(collection.path), base, True)]
    while stack:
        folder, depth, top = stack.pop()
        if folders is not None:
            folders[folder] = folder_stamp(folder)
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            if problems is not None:
                problems.append(Problem(folder[cut:], "skipped", f"cannot list: {exc}"))
            continue
        if not top and depth <= MAX_DEPTH and any(e.name == META_FILE for e in entries):
            continue  # a nested collection owns its folder
        deep = depth > MAX_DEPTH
        deep_notes = 0
        for e in entries:
            name = e.name
            if name[-3:] == ".md":
                try:
                    if e.is_symlink():
                        if not os.path.realpath(e.path).startswith(inside):
                            if problems is not None:
                                rel = e.path[cut:]
                                problems.append(
                                    Problem(
                                        rel,
                                        "link-outside",
                                        f"{rel} links outside the library; not indexed",
                                    )
                                )
                            continue
                        if e.is_dir():
                            continue
                    elif e.is_dir(follow_symlinks=False):
                        continue
                    if deep:
                        deep_notes += 1
                        continue
                    st = e.stat()
                except OSError:
                    continue
                path = e.path
                append((path[cut:], path, st.st_mtime, st.st_size, st.st_ctime_ns, st.st_ino))
            elif name[0] != "." and e.is_dir(follow_symlinks=False):
                stack.append((e.path, depth + 1, False))
        if deep_notes and problems is not None:
            rel = folder[cut:]
            problems.append(
                Problem(
                    rel,
                    "too-deep",
                    f"{rel} is {depth} levels deep; notes deeper than {MAX_DEPTH} "
                    "levels are not indexed; move them up or split the collection",
                )
            )
    return out


def _walk(
    root: Path,
    folder: Path,
    depth: int,
    current: Collection | None,
    layout: Layout,
    *,
    notes: list[Path] | None,
    top: bool = False,
    broken: bool = False,
) -> None:
    """`broken`: a `_meta.yaml` above (or here) could not be read, so its notes are reported once,
    as that bad meta, and never with the advice to create a `_meta.yaml` that already exists."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        layout.problems.append(Problem(_rel(root, folder), "skipped", f"cannot list: {exc}"))
        return
    names = {e.name for e in entries}
    if META_FILE in names and depth > 0 and not top:
        if depth > MAX_DEPTH:
            layout.problems.append(
                Problem(
                    _rel(root, folder),
                    "too-deep",
                    f"{_rel(root, folder)}/_meta.yaml is {depth} levels deep; collections live at "
                    f"most {MAX_DEPTH} levels below the root; move the folder up",
                )
            )
        elif notes is not None:
            return  # a nested collection owns its folder; it is listed on its own
        else:
            try:
                meta = read_meta(folder, default_name=_rel(root, folder), root=root)
            except BadMeta as exc:
                layout.problems.append(Problem(_rel(root, folder), "bad-meta", str(exc)))
                current = None
                broken = True  # its notes are covered by this problem, not "unregistered"
            else:
                current = Collection(root, folder, _rel(root, folder), meta)
                layout.collections.append(current)
                broken = False
    md_files = [e for e in entries if e.name.endswith(".md") and not e.is_dir()]
    if md_files:
        if depth == 0:
            stray = [e.name for e in md_files if e.name != INBOX_FILE]
            if stray:
                layout.problems.append(
                    Problem(
                        ".",
                        "outside-collection",
                        f"{len(stray)} note(s) at the root ({', '.join(stray[:3])}) are not in a "
                        "collection; move them into a collection folder",
                    )
                )
        elif depth > MAX_DEPTH:
            layout.problems.append(
                Problem(
                    _rel(root, folder),
                    "too-deep",
                    f"{_rel(root, folder)} is {depth} levels deep; notes deeper than {MAX_DEPTH} "
                    "levels are not indexed; move them up or split the collection",
                )
            )
        elif current is None and not broken:
            layout.problems.append(
                Problem(
                    _rel(root, folder),
                    "unregistered",
                    f"{_rel(root, folder)} has {len(md_files)} note(s) but no _meta.yaml, so it is "
                    f"invisible to search and routing; run `memo init-collection "
                    f"{_rel(root, folder)} --description ...`",
                )
            )
        elif notes is not None:
            for e in md_files:
                p = Path(e.path)
                if e.is_symlink():
                    target = p.resolve()
                    if root not in target.parents:
                        layout.problems.append(
                            Problem(
                                _rel(root, p),
                                "link-outside",
                                f"{_rel(root, p)} links outside the library; not indexed",
                            )
                        )
                        continue
                notes.append(p)
    for e in entries:
        if not e.is_dir(follow_symlinks=False) or is_hidden(e.name):
            continue
        _walk(root, Path(e.path), depth + 1, current, layout, notes=notes, broken=broken)
