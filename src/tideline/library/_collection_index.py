"""The index of one collection: `<collection>/.memo/index.db` and `.memo/state.json`.

Tables (migration set `library`):
    files(path PK, mtime, size, hash, chunks, skipped, note_id, tags, updated, checked_at,
          ctime_ns, ino)
    chunks(id PK, path, heading, line, ord, text, hash, mtime, embedded, parent)
    chunks_fts / chunks_tri / chunks_vec      owned by `tideline.search.TextIndex("chunks")`

Invariants:
- The markdown is the truth and is only ever read. Deleting `.memo/` loses nothing.
- A file's `files` row and its chunks change in one transaction, so a crash or kill leaves every
  file either fully old or fully new; the next sync redoes whatever was not committed.
- Text is indexed first and vectors fill in afterwards (`embedded = 0` marks a chunk still
  waiting), so a large collection is searchable lexically at once and an interrupted embedding
  pass simply continues next time.
- A chunk whose text (hash) already has a vector in this index reuses it: identical files and
  unchanged sections of an edited note are never embedded twice.
- A file is re-read when any of (mtime, size, ctime, inode) differs from its row: `cp -p`,
  `rsync -t` and `touch -r` restore mtime and size, but not ctime or inode. The watcher goes
  further and always hashes the files it saw an event for (`verify`).
- Notes are read through `read_inside` (no link out of the root is ever followed, even one swapped
  in after listing), and the row records the `fstat` of exactly the bytes that were indexed.
- A chunk that is mostly a list gets item keys (`_item_keys`): rows of `chunks` whose `parent` is
  the chunk's id, each with its own text and vector; the chunk itself keeps its full text for
  BM25 and, with keys, no vector (`embedded = 2`: its keys carry them). Search hits on a key
  count for its chunk (`_aggregate`). `state.json` records the key mode, so changing it rebuilds.
- A chunk longer than the model's input limit gets one vector per part (`embed_parts`); search
  returns it once, as near as its nearest part.
- `state.json` records the chunker and embedder versions; a mismatch, a missing state or a corrupt
  database means the index is deleted and rebuilt from the markdown, with a warning. Files are
  only ever created or deleted inside a `.memo` that memo owns (`_index_dir`).
- Damage can also sit on a page that opening never reads, and surface in the middle of a sync or
  a search. Then `Library` has the index thrown away the same way (`drop_damaged`), rebuilds that
  collection and runs the call again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import apsw

from tideline.clock import epoch_seconds
from tideline.embed import Embedder, estimate_tokens
from tideline.errors import DatabaseDamaged, LinkOutside, StoreError, UnreadableFile
from tideline.library._chunker import CHUNKER_VERSION, ChunkedNote, chunk_markdown, embed_text
from tideline.library._files import read_inside
from tideline.library._index_dir import claim_index_dir, remove_own
from tideline.library._item_keys import chunk_keys
from tideline.library._layout import (
    Collection,
    FolderStamp,
    NoteStat,
    Problem,
    folder_stamp,
    stat_notes,
)
from tideline.search import Scope, TextIndex, text_key
from tideline.store import Database, Migrations, id_lists, open_database

log = logging.getLogger(__name__)

SCHEMA = 1
MAX_FILE_BYTES = 2_000_000
RACY_SECONDS = 2.0  # a file modified this close to its last check is hashed even if stat matches
EMBED_BATCH = 64
FILL_HINT = "the next search or `memo reindex` fills them once the embedder is back"
KEY_MODES = ("items", "off")
NO_VECTOR = 2  # `embedded` of a chunk whose item keys carry its vectors

Progress = Callable[[str, int, int], None]  # (phase, done, total)

_migrations = Migrations("library")


@_migrations.step(1)
def _create(db: Database) -> None:
    db.execute(
        "CREATE TABLE files(path TEXT PRIMARY KEY, mtime REAL NOT NULL, size INTEGER NOT NULL,"
        " hash TEXT NOT NULL, chunks INTEGER NOT NULL DEFAULT 0, skipped TEXT,"
        " note_id TEXT, tags TEXT, updated TEXT, checked_at REAL NOT NULL)"
    )
    db.execute(
        "CREATE TABLE chunks(id INTEGER PRIMARY KEY, path TEXT NOT NULL, heading TEXT NOT NULL,"
        " line INTEGER NOT NULL, ord INTEGER NOT NULL, text TEXT NOT NULL, hash TEXT NOT NULL,"
        " mtime REAL NOT NULL, embedded INTEGER NOT NULL DEFAULT 0)"
    )
    db.execute("CREATE INDEX chunks_path ON chunks(path)")
    db.execute("CREATE INDEX chunks_hash ON chunks(hash, embedded)")
    db.execute("CREATE INDEX chunks_pending ON chunks(embedded)")
    TextIndex.create_tables(db, "chunks")


@_migrations.step(2)
def _change_stamps(db: Database) -> None:
    """ctime and inode catch edits that restore mtime and size; NULL (older rows) re-checks once."""
    db.execute("ALTER TABLE files ADD COLUMN ctime_ns INTEGER")
    db.execute("ALTER TABLE files ADD COLUMN ino INTEGER")


@_migrations.step(3)
def _item_keys(db: Database) -> None:
    """Item keys are chunk rows with a parent (see `library/_item_keys.py`); NULL marks a chunk itself."""
    db.execute("ALTER TABLE chunks ADD COLUMN parent INTEGER")
    db.execute("CREATE INDEX chunks_parent ON chunks(parent)")


@dataclass
class SyncReport:
    """What one sync of one collection did."""

    collection: str
    scanned: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks_written: int = 0
    keys_written: int = 0
    embedded: int = 0
    reused_vectors: int = 0
    embed_seconds: float = 0.0
    vectors_pending: int = 0  # left without a vector: the embedder was down
    seconds: float = 0.0
    rebuilt: str = ""
    skipped: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def noop(self) -> bool:
        return not (self.changed or self.removed or self.embedded or self.reused_vectors)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["skipped"] = [p.__dict__ for p in self.skipped]
        return d


@dataclass
class _Stat:
    path: str  # absolute
    rel: str
    mtime: float
    size: int
    ctime_ns: int
    ino: int

    def stamp(self) -> tuple[float, int, int, int]:
        return (self.mtime, self.size, self.ctime_ns, self.ino)


Stamp = tuple[float, int, int | None, int | None]  # (mtime, size, ctime_ns, inode)
Known = dict[str, tuple[Stamp, str, float]]  # rel -> (stamp, hash, checked_at)


def _file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _lexical_text(path: str, heading: str, text: str) -> str:
    """What BM25 sees: the file name (as words too) and the heading path make a chunk findable
    by `conda-clean` or by its section title even when the body never repeats them."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    words = stem.replace("-", " ").replace("_", " ")
    return f"{stem} {words}\n{heading}\n{text}"


class CollectionIndex:
    """Open, sync and search the index of one collection."""

    def __init__(
        self,
        collection: Collection,
        embedder: Embedder | None = None,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        busy_timeout_ms: int = 5000,
        keys: str = "items",
    ):
        if keys not in KEY_MODES:
            raise ValueError(f"keys={keys!r}; use one of {', '.join(KEY_MODES)}")
        self.collection = collection
        self.keys = keys
        use_vectors = embedder is not None and embedder.dim > 0
        self.embedder = embedder if use_vectors and not collection.meta.lexical_only else None
        self.max_file_bytes = max_file_bytes
        self.busy_timeout_ms = busy_timeout_ms
        self.dir = collection.index_dir
        self.db_path = self.dir / "index.db"
        self.state_path = self.dir / "state.json"
        self._db: Database | None = None
        self._text: TextIndex | None = None
        self._known: Known | None = None
        self._known_version: Any = None
        self._folders: dict[str, FolderStamp | None] | None = None  # of the last full stat pass
        self._checked = 0.0  # when that pass began (monotonic)
        self.warnings: list[str] = []

    # -- opening, versions, repair ----------------------------------------------------------
    def expected_state(self) -> dict[str, Any]:
        """The versions this process would write. Without an embedder (lexical readers such as
        `memo search --mode lex`) the embedder fields are left as they are: a reader never
        throws away another process's vectors."""
        state: dict[str, Any] = {"schema": SCHEMA, "chunker": CHUNKER_VERSION, "keys": self.keys}
        if self.embedder is not None:
            state["embedder"] = self.embedder.model_id
            state["dim"] = int(self.embedder.dim)
        return state

    def read_state(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _write_state(self, **extra: Any) -> None:
        state = self.read_state() or {}
        state.update(self.expected_state())
        state.setdefault("embedder", "none")
        state.setdefault("dim", 0)
        state.update(extra)
        tmp = self.state_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.state_path)

    @property
    def db(self) -> Database:
        if self._db is None:
            self._open()
        assert self._db is not None
        return self._db

    @property
    def text(self) -> TextIndex:
        if self._text is None:
            self._open()
        assert self._text is not None
        return self._text

    def _open(self) -> None:
        claim_index_dir(self.dir)
        reason = ""
        state = self.read_state()
        want = self.expected_state()
        if self.db_path.exists():
            if not self.db_path.is_file():
                reason = "index.db is not a file"
            elif state is None:
                reason = "state.json is missing or unreadable"
            else:
                diff = [k for k in want if state.get(k) != want[k]]
                if state.get("embedder") in (None, "none") and "embedder" in want:
                    diff = [k for k in diff if k not in ("embedder", "dim")]  # vectors fill in
                if diff:
                    reason = ", ".join(f"{k} {state.get(k)!r} -> {want[k]!r}" for k in diff)
        if reason:
            self._drop(f"index of {self.collection.rel} rebuilt: {reason}")
        if not self.db_path.exists():  # state first: a reader never sees a db without one
            self._write_state(created_at=epoch_seconds())
        try:
            self._connect()
        except (StoreError, apsw.Error):
            self._connect_or_drop()

    def _connect_or_drop(self) -> None:
        """Retry once (another process may be creating the same index right now: both race to
        apply the first migration), then treat the file as corrupt and rebuild it."""
        time.sleep(0.05)
        try:
            self._connect()
        except (StoreError, apsw.Error) as exc:
            self._drop(
                f"index of {self.collection.rel} was unusable ({exc}); rebuilt from markdown"
            )
            self._write_state(created_at=epoch_seconds())
            self._connect()

    def _connect(self) -> None:
        db = open_database(self.db_path, _migrations, busy_timeout_ms=self.busy_timeout_ms)
        try:
            db.execute("SELECT count(*) FROM files").fetchall()
            text = TextIndex(db, "chunks")
            if text.stale:  # made by another lexical analyser: cut every text anew, once
                rows = db.execute("SELECT id, path, heading, text FROM chunks").fetchall()
                text.reanalyse(
                    (cast(int, r[0]), _lexical_text(str(r[1]), str(r[2]), str(r[3]))) for r in rows
                )
            if self.embedder is not None:
                text.bind_vectors(self.embedder.model_id, int(self.embedder.dim))
        except BaseException:
            db.close()
            raise
        self._db, self._text = db, text

    def _drop(self, message: str) -> None:
        """Delete the index files; `message` is said only once they are gone (a refusal, such as a
        folder with files where index.db belongs, is the only thing the user then sees)."""
        self.close()
        if claim_index_dir(self.dir, create=False):
            for suffix in ("", "-wal", "-shm", "-journal"):
                remove_own(Path(str(self.db_path) + suffix))
            remove_own(self.state_path)
        log.warning(message)
        self.warnings.append(message)

    def drop_damaged(self, exc: DatabaseDamaged) -> bool:
        """Throw this index away when `exc` is damage found in its file mid-use; False when the
        damage is in another file."""
        if not exc.path or not _same_file(Path(exc.path), self.db_path):
            return False
        what = str(exc).removeprefix(f"{exc.path} ").split("; ", 1)[0]
        self._drop(
            f"index of {self.collection.rel} {what}; thrown away and rebuilt from the markdown"
        )
        return True

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db, self._text, self._known, self._folders = None, None, None, None

    def rebuild(self) -> None:
        """Throw the index away; the next sync re-reads every note."""
        self._drop(f"index of {self.collection.rel} rebuilt on request")

    # -- scanning ---------------------------------------------------------------------------
    def _stat_some(self, paths: Iterable[Path]) -> tuple[list[_Stat], list[str]]:
        """Stat specific files; returns present files and the rel paths that are gone."""
        root = self.collection.root
        present, gone = [], []
        allowed: dict[str, _Stat] | None = None
        for p in paths:
            rel = p.relative_to(root).as_posix()
            if allowed is None:
                allowed = {r[0]: _Stat(r[1], r[0], *r[2:]) for r in stat_notes(self.collection)}
            s = allowed.get(rel)
            if s is None:
                gone.append(rel)  # deleted, or no longer a note here (too deep, moved, a link out)
                continue
            present.append(s)
        return present, gone

    def _known_files(self) -> Known:
        """`files` as a dict, cached until this or another connection commits a change."""
        version = self.db.scalar("PRAGMA data_version")
        if self._known is None or version != self._known_version:
            self._known = {
                r[0]: ((r[1], r[2], r[5], r[6]), r[3], r[4])
                for r in self.db.execute(
                    "SELECT path, mtime, size, hash, checked_at, ctime_ns, ino FROM files"
                )
            }
            self._known_version = version
        return self._known

    def behind(self, notes: list[NoteStat]) -> int:
        """How far the index lags the files (a fresh `stat_notes`): notes whose (mtime, size,
        ctime, inode) differ from what was indexed, plus indexed notes that are gone."""
        known = {rel: stamp for rel, (stamp, _, _) in self._known_files().items()}
        lag = sum(1 for rel, _, *stamp in notes if known.get(rel) != tuple(stamp))
        return lag + len(known.keys() - {n[0] for n in notes})

    # -- syncing ----------------------------------------------------------------------------
    def sync(
        self,
        paths: Iterable[Path] | None = None,
        *,
        under: str | None = None,
        full: bool = False,
        verify: bool = False,
        progress: Progress | None = None,
        embed: bool = True,
    ) -> SyncReport:
        """Bring the index up to date with the markdown.

        `paths` limits the pass to those files (the watcher's batch, or one file before a search);
        `under` limits it to a sub-folder (relative to the library root); `verify` hashes every
        file even when its stat matches (the watcher saw an event: stat can lie, the hash cannot);
        `full` re-reads and re-chunks every file even when the hash says it is unchanged. Without
        limits, files that disappeared are removed from the index. `embed=False` leaves new
        chunks pending (the caller saw the embedder fail a moment ago).
        """
        started = time.perf_counter()
        report = SyncReport(self.collection.rel)
        known = self._known_files()  # opens (and if needed rebuilds) the index first
        report.warnings.extend(self.warnings)
        self.warnings.clear()
        now = epoch_seconds()
        todo: list[_Stat] = []
        checked = time.monotonic()  # a pass over every note records its folders (`_vouch`)
        folders: dict[str, FolderStamp | None] | None = {} if paths is None and not under else None
        if paths is not None:
            stats, gone = self._stat_some(paths)
            rows = [(s.rel, s.path, *s.stamp()) for s in stats]
        else:
            rows = stat_notes(self.collection, report.skipped, folders)
            if under:
                prefix = under.rstrip("/") + "/"
                rows = [r for r in rows if r[0].startswith(prefix)]
            gone_set = known.keys() - {r[0] for r in rows}
            if under:
                gone_set = {g for g in gone_set if g.startswith(under.rstrip("/") + "/")}
            gone = sorted(gone_set)
        report.scanned = len(rows)
        for rel, path, mtime, size, ctime_ns, ino in rows:
            s = _Stat(path, rel, mtime, size, ctime_ns, ino)
            old = known.get(rel)
            # unchanged when stat matches and the file was last changed well before we last
            # checked it (a write in the same clock tick as our check could hide behind stat)
            if (
                old is not None
                and not (full or verify)
                and old[0] == s.stamp()
                and old[2] - max(mtime, ctime_ns / 1e9) > RACY_SECONDS
            ):
                continue
            todo.append(s)
        report.unchanged = report.scanned - len(todo)
        if gone:
            self._remove(gone)
            report.removed = len(gone)
        total = len(todo)
        for start in range(0, total, 64):
            batch = todo[start : start + 64]
            self._index_files(batch, known, report, full=full, now=now)
            if progress:
                progress("text", min(start + 64, total), total)
        if embed:
            self._embed_pending(report, progress)
        report.seconds = time.perf_counter() - started
        if todo or gone:
            self._known = None  # our own commits do not change data_version for us
        if not report.noop or full:
            self._write_state(last_sync=epoch_seconds())
        if folders is not None:
            self._vouch(folders, checked, now)
        return report

    def _vouch(self, folders: dict[str, FolderStamp | None], checked: float, now: float) -> None:
        """Keep the folders a full stat pass listed, unless one of them cannot vouch for it: gone
        while listed, or changed so close to the listing (`RACY_SECONDS`) that a later change in
        the same clock tick would leave its stamp as it is."""
        if any(s is None or now - max(s[0], s[1]) / 1e9 <= RACY_SECONDS for s in folders.values()):
            self._folders = None
        else:
            self._folders, self._checked = folders, checked

    def checked_ago(self, recheck: float) -> float | None:
        """Seconds since the last stat pass over every note, while that pass still vouches for
        every note: it is younger than `recheck` and no folder it listed has changed since (a
        note added, removed, renamed or saved by replacing it changes its folder; an edit in
        place does not, which is why the pass is redone after `recheck`). None: stat them all.
        Costs one stat per folder."""
        if self._folders is None:
            return None
        age = time.monotonic() - self._checked
        if age >= recheck:
            return None
        if any(folder_stamp(path) != stamp for path, stamp in self._folders.items()):
            return None
        return age

    def _read(self, s: _Stat) -> tuple[bytes | None, str]:
        """Read a note safely; `s` is updated to the stat of what was actually read."""
        try:
            data, st = read_inside(self.collection.root, Path(s.path), limit=self.max_file_bytes)
        except UnreadableFile as exc:
            return None, exc.reason
        s.mtime, s.size, s.ctime_ns, s.ino = st.st_mtime, st.st_size, st.st_ctime_ns, st.st_ino
        if b"\x00" in data[:8192]:
            return data, "binary content (NUL bytes); not a markdown note"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return data, f"not valid UTF-8 (byte {exc.start}); save it as UTF-8"
        return data, ""

    def _index_files(
        self,
        batch: list[_Stat],
        known: Known,
        report: SyncReport,
        *,
        full: bool,
        now: float,
    ) -> None:
        count = self.embedder.count_tokens if self.embedder is not None else estimate_tokens
        prepared: list[tuple[_Stat, str, ChunkedNote | None, str, bool]] = []
        for s in batch:
            data, why = self._read(s)
            digest = _file_hash(data) if data is not None else f"unread:{s.mtime}:{s.size}"
            old = known.get(s.rel)
            if not full and old is not None and old[1] == digest:
                prepared.append((s, digest, None, "", True))  # touched, same bytes
                continue
            if why:
                kind = "link-outside" if why == LinkOutside.REASON else "skipped"
                problem = Problem(s.rel, kind, f"{s.rel}: {why}")
                report.skipped.append(problem)
                prepared.append((s, digest, None, why, False))
                continue
            assert data is not None
            note = chunk_markdown(data.decode("utf-8"), s.rel, count_tokens=count)
            report.warnings.extend(note.warnings)
            prepared.append((s, digest, note, "", False))
        with self.db.transaction():
            for s, digest, parsed, why, same in prepared:
                if same:
                    report.unchanged += 1
                    self.db.execute(
                        "UPDATE files SET mtime = ?, size = ?, ctime_ns = ?, ino = ?,"
                        " checked_at = ? WHERE path = ?",
                        (s.mtime, s.size, s.ctime_ns, s.ino, now, s.rel),
                    )
                    self.db.execute("UPDATE chunks SET mtime = ? WHERE path = ?", (s.mtime, s.rel))
                    continue
                report.changed += 1
                self._replace_file(s, digest, parsed, why, now, report)

    def _replace_file(
        self,
        s: _Stat,
        digest: str,
        note: ChunkedNote | None,
        why: str,
        now: float,
        report: SyncReport,
    ) -> None:
        db, text = self.db, self.text
        old: list[tuple[int, str, int]] = db.execute(
            "SELECT id, hash, embedded FROM chunks WHERE path = ?", (s.rel,)
        ).fetchall()  # type: ignore[assignment]
        old_vec = {h: i for i, h, e in old if e == 1}
        new_rows: list[tuple[int, str]] = []
        keep: list[tuple[int, int]] = []
        if note is not None:
            for c in note.chunks:
                keys = chunk_keys(c.text) if self.keys == "items" else []
                parent: int | None = None  # the chunk row first, then its keys under it
                rows = [(c.line, c.text)] + [(c.line + k.line, k.text) for k in keys]
                for line, body in rows:
                    h = text_key(embed_text(c.heading, body))
                    state = NO_VECTOR if keys and parent is None else 0
                    cur = db.execute(
                        "INSERT INTO chunks(path, heading, line, ord, text, hash, mtime, embedded,"
                        " parent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                        (s.rel, c.heading, line, c.ord, body, h, s.mtime, state, parent),
                    )
                    rowid = int(cur.fetchall()[0][0])  # type: ignore[arg-type]
                    parent = rowid if parent is None else parent
                    new_rows.append((rowid, _lexical_text(s.rel, c.heading, body)))
                    if h in old_vec and text.has_vectors and state == 0:
                        keep.append((rowid, old_vec[h]))
                report.keys_written += len(keys)
        if keep:  # unchanged sections keep their vectors: copy before the old rows go
            vectors = text.vectors_of([donor for _, donor in keep])
            moved = [(rowid, vectors[d]) for rowid, d in keep if d in vectors]
            text.set_vectors(moved)
            db.executemany("UPDATE chunks SET embedded = 1 WHERE id = ?", [(r,) for r, _ in moved])
        if old:
            text.delete(i for i, _, _ in old)
            db.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i, _, _ in old])
        text.upsert_many(new_rows)
        report.chunks_written += len(note.chunks) if note is not None else 0
        db.execute(
            "INSERT INTO files(path, mtime, size, ctime_ns, ino, hash, chunks, skipped, note_id,"
            " tags, updated, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(path) DO UPDATE SET mtime = excluded.mtime, size = excluded.size,"
            " ctime_ns = excluded.ctime_ns, ino = excluded.ino, hash = excluded.hash,"
            " chunks = excluded.chunks, skipped = excluded.skipped, note_id = excluded.note_id,"
            " tags = excluded.tags, updated = excluded.updated, checked_at = excluded.checked_at",
            (
                s.rel,
                s.mtime,
                s.size,
                s.ctime_ns,
                s.ino,
                digest,
                len(note.chunks) if note is not None else 0,
                why or None,
                note.note_id if note is not None else None,
                ",".join(note.tags) if note is not None else None,
                note.updated if note is not None else None,
                now,
            ),
        )

    def _remove(self, rels: list[str]) -> None:
        db = self.db
        with db.transaction():
            for rel in rels:
                ids = [r[0] for r in db.execute("SELECT id FROM chunks WHERE path = ?", (rel,))]
                self.text.delete(ids)
                db.execute("DELETE FROM chunks WHERE path = ?", (rel,))
                db.execute("DELETE FROM files WHERE path = ?", (rel,))

    def _embed_pending(self, report: SyncReport, progress: Progress | None) -> None:
        """Give every chunk still marked `embedded = 0` its vector (`TextIndex.fill_vectors`),
        copying the vector of an identical text this index already has. An embedder that is
        down leaves them pending with a warning; the next sync fills them."""
        if self.embedder is None or not self.text.has_vectors:
            return
        db = self.db
        pending = db.execute("SELECT id, hash, heading, text FROM chunks WHERE embedded = 0")
        keys: dict[int, str] = {}
        items: list[tuple[int, str]] = []
        for i, h, heading, body in pending:
            keys[i] = h
            items.append((i, embed_text(heading, body)))
        if not items:
            return
        donors = dict(
            db.execute(
                "SELECT hash, min(id) FROM chunks WHERE embedded = 1"
                " AND hash IN (SELECT hash FROM chunks WHERE embedded = 0) GROUP BY hash"
            )
        )
        fill = self.text.fill_vectors(
            self.embedder,
            items,
            batch=EMBED_BATCH,
            donors=donors,
            progress=(lambda done, total: progress("vectors", done, total)) if progress else None,
            on_batch=lambda ids: self._mark_embedded(ids, keys),
            hint=FILL_HINT,
        )
        report.embedded += fill.embedded
        report.reused_vectors += fill.reused
        report.embed_seconds += fill.seconds
        report.vectors_pending = fill.pending
        if fill.warning:
            report.warnings.append(f"{self.collection.rel}: {fill.warning}")

    def _mark_embedded(self, ids: Sequence[int], keys: Mapping[int, str]) -> None:
        """Inside the fill's transaction: mark the chunks that got their vector. A chunk that
        another process deleted or replaced while the text was being embedded must not keep it:
        a deleted id loses the stray vector (its text rows are gone already), an id reused for
        other text stays pending so its own vector replaces this one."""
        now: dict[int, str] = {}
        for marks, part in id_lists(ids):
            now.update(self.db.execute(f"SELECT id, hash FROM chunks WHERE id IN ({marks})", part))
        gone = [i for i in ids if i not in now]
        if gone:
            self.text.delete(gone)
        self.db.executemany(
            "UPDATE chunks SET embedded = ? WHERE id = ?",
            [(int(now[i] == keys[i]), i) for i in ids if i in now],
        )

    # -- reading ----------------------------------------------------------------------------
    def path_filter(self, kind: str, rel: str) -> Scope:
        """This index narrowed to one file (`file`), a sub-folder (`under`) or nothing (`all`):
        the condition is written here because this module owns `chunks`."""
        if kind == "file":
            return Scope(self.text, "rowid IN (SELECT id FROM chunks WHERE path = ?)", (rel,))
        if kind == "under":
            lo = rel.rstrip("/") + "/"
            where = "rowid IN (SELECT id FROM chunks WHERE path >= ? AND path < ?)"
            return Scope(self.text, where, (lo, lo[:-1] + "0"))
        return Scope(self.text)

    def parents(self, ids: Iterable[int]) -> dict[int, int]:
        """The chunk each record belongs to: an item key's parent, a chunk itself."""
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return dict(
            self.db.execute(
                f"SELECT id, coalesce(parent, id) FROM chunks WHERE id IN ({marks})", ids
            )
        )

    def chunk_rows(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {
            r["id"]: r
            for r in self.db.rows(
                f"SELECT id, path, heading, line, text, mtime, parent FROM chunks"
                f" WHERE id IN ({marks})",
                ids,
            )
        }

    def status(self) -> dict[str, Any]:
        db = self.db
        files = db.scalar("SELECT count(*) FROM files WHERE skipped IS NULL") or 0
        skipped = [
            {
                "path": r["path"],
                "kind": "link-outside" if r["skipped"] == LinkOutside.REASON else "skipped",
                "reason": r["skipped"],
            }
            for r in db.rows("SELECT path, skipped FROM files WHERE skipped IS NOT NULL")
        ]
        chunks = db.scalar("SELECT count(*) FROM chunks WHERE parent IS NULL") or 0
        keys = db.scalar("SELECT count(*) FROM chunks WHERE parent IS NOT NULL") or 0
        pending = db.scalar("SELECT count(*) FROM chunks WHERE embedded = 0") or 0
        newest = db.scalar("SELECT max(mtime) FROM files") or 0.0
        state = self.read_state() or {}
        return {
            "files": files,
            "chunks": chunks,
            "keys": keys,
            "vectors_pending": pending if self.embedder is not None else 0,
            "skipped": skipped,
            "newest_note_mtime": newest,
            "last_sync": state.get("last_sync"),
            "chunker": state.get("chunker"),
            "embedder": state.get("embedder"),
        }
