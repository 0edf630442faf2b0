"""Writing and reading one note: what `memo_write` / `memo_read` (and `memo write|read`) do.

An agent keeps its notes where its human reads them, so the rules are the library's own: a note
is a `.md` file inside a collection (a folder with a `_meta.yaml`, at most `MAX_DEPTH` levels
down, no dot-folders), never outside the root (the path is resolved, links included, and then
written by the no-follow walk of `write_inside`), never over a human's note by accident (an
existing note is only appended to, and only when asked), and never larger than the index reads.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tideline.clock import system_clock
from tideline.errors import (
    FileChanged,
    InvalidInput,
    NoCollection,
    NoteBusy,
    NotFound,
    UnreadableFile,
)
from tideline.library._files import Seen, read_inside, write_inside
from tideline.library._index_dir import claim_index_dir
from tideline.library._layout import Collection, Layout
from tideline.library._paths import (
    INBOX_FILE,
    INDEX_DIR,
    MAX_DEPTH,
    MAX_READ_LINES,
    META_FILE,
    is_hidden,
    resolve_inside,
)
from tideline.pathnames import shown
from tideline.search import valid_text
from tideline.store import Migrations, Storage, WriteKeys, open_database

#: Most lines one `read_note` returns; the answer says where to go on.
#: How often a write is tried again when the note changes under it (a person editing it).
WRITE_TRIES = 8


#: The scope of `memo_write`'s idempotency keys.
MEMO_WRITE = "memo_write"
_writes = Migrations("library_writes")


@_writes.step(1)
def _keys_table(db: Storage) -> None:
    WriteKeys.create_table(db)


def open_write_keys(root: Path, busy_timeout_ms: int = 5000) -> WriteKeys:
    """The idempotency keys of the library's writes, in `<root>/.memo/writes.db` (made on the
    first keyed write; deleting `.memo/` forgets them, and with them only the retries of writes
    made before). The library is files on this machine, indexed as they change: its keys
    expire by the machine's clock."""
    claim_index_dir(root / INDEX_DIR)
    db = open_database(root / INDEX_DIR / "writes.db", _writes, busy_timeout_ms=busy_timeout_ms)
    return WriteKeys(db, system_clock)


def write_note_once(
    keys: WriteKeys,
    key: str,
    root: Path,
    target: Path,
    collection: Collection,
    text: str,
    *,
    append: bool,
    max_bytes: int,
) -> NoteWritten:
    """`write_note` under an idempotency key: the same key again returns the first answer
    (`replayed`) and writes nothing. The key is recorded in the transaction that holds the
    keys' write lock across the note's replacement, so two processes sending one key write once;
    only a process killed between the rename and the commit (microseconds) leaves a written note
    whose key is unknown."""
    request = {"path": target.relative_to(root).as_posix(), "text": text, "append": append}
    with keys.db.transaction():
        first = keys.replay(MEMO_WRITE, key, request)
        if first is not None:
            return NoteWritten(**{**first, "replayed": True})
        written = write_note(root, target, collection, text, append=append, max_bytes=max_bytes)
        keys.record(MEMO_WRITE, key, request, written.to_dict())
    return written


@dataclass
class NoteWritten:
    path: str
    collection: str
    created: bool
    bytes: int
    lines: int
    added_at_line: int  # where the new text starts (1 for a new note)
    replayed: bool = False  # the answer of an earlier, identical write, sent again

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class NoteText:
    path: str
    start: int
    end: int
    total_lines: int
    text: str
    more: bool  # lines follow `end`: read on from end + 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def note_target(root: Path, layout: Layout, path: str) -> tuple[Path, Collection]:
    """The file `path` names and its collection, or an error saying which rule it breaks."""
    if not str(path).strip():
        raise InvalidInput("path is empty; pass a note path like work/jira/today.md")
    target = resolve_inside(root, path)
    rel = target.relative_to(root).as_posix() if target != root else ""
    if not rel.endswith(".md") or target.name in (".md", META_FILE):
        raise InvalidInput(f"{shown(path)}: a note is a .md file; pick a name like {rel or 'x'}.md")
    folders = Path(rel).parts[:-1]
    if any(is_hidden(p) for p in Path(rel).parts):
        raise InvalidInput(f"{rel}: hidden files and folders are not part of the library")
    if not folders:
        hint = "the root inbox is for drafts" if target.name == INBOX_FILE else "it is at the root"
        raise NoCollection(f"{rel} is not in a collection ({hint}); write into a collection folder")
    if len(folders) > MAX_DEPTH:
        raise InvalidInput(
            f"{rel}: notes deeper than {MAX_DEPTH} folders are not indexed; write it higher up"
        )
    collection = layout.collection_of(target.parent) if target.parent.exists() else None
    if collection is None:
        collection = _nearest(layout, target)
    if collection is None:
        raise NoCollection(
            f"{rel} is not in a collection; write into one listed by memo_status, or make its "
            f"folder one with `memo init-collection {folders[0]} --description ...`"
        )
    return target, collection


def _nearest(layout: Layout, target: Path) -> Collection | None:
    """The collection of a note in a folder that does not exist yet."""
    found = [c for c in layout.collections if c.path in target.parents]
    return max(found, key=lambda c: len(c.path.parts), default=None)


def write_note(
    root: Path, target: Path, collection: Collection, text: str, *, append: bool, max_bytes: int
) -> NoteWritten:
    """Create the note, or append `text` to it with `append`; whole or not at all.

    Read, then compare and swap (`write_inside` with what was read): a note edited by hand (or
    created) between the read and the write is read again and the text appended to the new
    version, up to `WRITE_TRIES` times, so an edit made meanwhile is never lost. Creating a note
    that exists already with exactly this text is answered as the first creation was
    (`replayed`): a retry whose answer was lost is not an error.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("text is empty; pass the markdown to write")
    text = valid_text(text)
    rel = target.relative_to(root).as_posix()
    for attempt in range(WRITE_TRIES):
        try:
            return _write_once(root, target, collection, text, append=append, max_bytes=max_bytes)
        except FileChanged:
            time.sleep(random.uniform(0, 0.002 * 2**attempt))  # let the other writer finish
    raise NoteBusy(rel, f"changed {WRITE_TRIES} times while it was being written; try again")


def _write_once(
    root: Path, target: Path, collection: Collection, text: str, *, append: bool, max_bytes: int
) -> NoteWritten:
    rel = target.relative_to(root).as_posix()
    old, seen = "", None
    body = text.rstrip("\n") + "\n"
    if target.exists() or target.is_symlink():
        data, st = read_inside(root, target, limit=max_bytes)
        old, seen = _decode(rel, data), Seen.of(data, st)
        if not append and old == body:
            return NoteWritten(rel, collection.rel, True, len(data), old.count("\n"), 1, True)
        if not append:
            raise InvalidInput(
                f"{rel} already exists; pass append=true (--append) to add to it, or pick a new "
                "name (an existing note is never overwritten)"
            )
    sep = "" if not old or old.endswith("\n\n") else ("\n" if old.endswith("\n") else "\n\n")
    new = old + sep + body
    data = new.encode("utf-8")
    if len(data) > max_bytes:
        raise InvalidInput(
            f"{rel} would be {len(data):,} bytes, more than the {max_bytes:,} a note may have "
            "(larger ones are not indexed); start a new note"
        )
    created = write_inside(root, target, data, seen)
    return NoteWritten(
        rel,
        collection.rel,
        created,
        len(data),
        new.count("\n"),
        (old + sep).count("\n") + 1,
    )


def read_note(
    root: Path, path: str, start: int = 1, end: int | None = None, *, max_bytes: int
) -> NoteText:
    """Lines `start`–`end` (1-based, inclusive) of a file of the library, at most
    `MAX_READ_LINES`; `path:line` (a search hit's location) starts there."""
    raw = str(path).strip()
    head, _, line = raw.rpartition(":")
    if head and line.isdigit() and start == 1:
        raw, start = head, int(line)
    target = resolve_inside(root, raw)
    if target == root or not target.is_file():
        raise NotFound(
            f"{shown(raw)}: no such note in the library {root}; find one with memo_search"
        )
    rel = target.relative_to(root).as_posix()
    if any(is_hidden(p) for p in Path(rel).parts):
        raise InvalidInput(f"{rel}: hidden files and folders are not part of the library")
    lines = _decode(rel, read_inside(root, target, limit=max_bytes)[0]).splitlines()
    if start < 1 or (end is not None and end < start):
        raise InvalidInput(f"lines {start}–{end}: pass 1 ≤ start ≤ end")
    last = min(len(lines), end or len(lines), start + MAX_READ_LINES - 1)
    if start > max(len(lines), 1):
        raise InvalidInput(f"{rel} has {len(lines)} lines; start at or before line {len(lines)}")
    return NoteText(
        rel, start, last, len(lines), "\n".join(lines[start - 1 : last]), last < len(lines)
    )


def _decode(rel: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableFile(rel, "not valid UTF-8; save it as UTF-8") from None
