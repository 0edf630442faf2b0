"""`Watcher`: keeps the indexes of a library in step with hand edits.

The event is a trigger, never the truth: editors write in bursts (vim's `4913` probe file, atomic
renames in VS Code and Obsidian), so events only name paths to look at. After a quiet period of
`debounce` seconds (500 ms) the batch is synced and the content hash decides whether anything
changed. Because inotify goes blind on FUSE/sshfs/SMB and drops events when its queue overflows,
a reconcile pass (a stat scan of the whole library) runs every `reconcile_every` seconds.

While it runs, the watcher beats (`_heartbeat`: `<root>/.memo-watch` touched every second) and
registers with its `Library`, so searches may skip their stat pass of every note (the library's
`catch_up="auto"`): a search in this process first waits for the events already seen to be
synced (`settle`), one in another process trusts the index as the watcher keeps it.

All writes go through SQLite in WAL mode with short transactions (embedding happens outside
them), so searches in other processes never see "database is locked".
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from tideline.library import _heartbeat
from tideline.library._collection_index import SyncReport
from tideline.library._library import Library
from tideline.library._paths import META_FILE, REGISTRY_FILE

log = logging.getLogger(__name__)

DEBOUNCE = 0.5
MAX_DELAY = 3.0  # a file edited continuously is still indexed this often
RECONCILE_EVERY = 12 * 60.0


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher):
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if raw:
                self.watcher.notice(Path(raw if isinstance(raw, str) else raw.decode()), event)


class Watcher:
    """Watch one library root; index changed notes after a debounce; reconcile periodically."""

    def __init__(
        self,
        library: Library,
        *,
        debounce: float = DEBOUNCE,
        reconcile_every: float = RECONCILE_EVERY,
        on_sync: Callable[[list[SyncReport]], None] | None = None,
    ):
        self.library = library
        self.root = library.root
        self.debounce = debounce
        self.reconcile_every = reconcile_every
        self.on_sync = on_sync
        self._pending: set[Path] = set()
        self._first_event = 0.0
        self._last_event = 0.0
        self._relayout = False
        self._rescan = False
        self._urgent = False  # a search waits: sync without the debounce
        self._busy = False  # a batch is being synced
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._observer = Observer()
        self._thread = threading.Thread(target=self._run, name="memo-watcher", daemon=True)
        self.errors: list[str] = []
        self.syncs = 0

    # -- events -----------------------------------------------------------------------------
    def notice(self, path: Path, event: FileSystemEvent) -> None:
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return
        if any(part.startswith(".") for part in rel.parts):
            return  # .memo/ (our own writes), .git/, editor temp folders
        name = rel.name
        with self._cond:
            if name == META_FILE:
                self._relayout = True
                self._rescan = True
            elif event.is_directory:
                if event.event_type not in ("created", "deleted", "moved"):
                    return  # a folder's mtime moved (a file came or went): its own event follows
                self._relayout = True
                self._rescan = True
            elif name.endswith(".md"):
                self._pending.add(self.root / rel)
            elif name == REGISTRY_FILE:
                return
            else:
                return
            now = time.monotonic()
            if not self._first_event:
                self._first_event = now
            self._last_event = now
            self._cond.notify_all()

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> Watcher:
        self._observer.schedule(_Handler(self), str(self.root), recursive=True)
        self._observer.start()
        self._thread.start()
        _heartbeat.beat(self.root, create=True)
        self.library.watcher = self
        return self

    def stop(self) -> None:
        if self.library.watcher is self:
            self.library.watcher = None
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._thread.join(timeout=30)
        _heartbeat.stop(self.root)

    @property
    def pending(self) -> int:
        """Notes seen changing and not yet synced."""
        with self._cond:
            return len(self._pending)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self._stop.is_set()

    def settle(self, timeout: float = 2.0) -> None:
        """Sync the events seen so far now, skipping the debounce, and wait for it (up to
        `timeout`): a search in this process then sees an edit made just before it."""
        deadline = time.monotonic() + timeout
        with self._cond:
            if not (self._first_event or self._busy):
                return
            self._urgent = True
            self._cond.notify_all()
            while (self._first_event or self._busy) and self.alive:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def run_forever(self) -> None:
        """Block until interrupted (Ctrl-C)."""
        self.start()
        try:
            while not self._stop.wait(1.0):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    # -- the worker -------------------------------------------------------------------------
    def _run(self) -> None:
        next_reconcile = time.monotonic() + self.reconcile_every
        next_beat = time.monotonic() + _heartbeat.EVERY
        while not self._stop.is_set():
            if time.monotonic() >= next_beat:
                self._beat()
                next_beat = time.monotonic() + _heartbeat.EVERY
            with self._cond:
                now = time.monotonic()
                if self._first_event and self._urgent:
                    wait = 0.0
                elif self._first_event:
                    quiet = self._last_event + self.debounce - now
                    overdue = self._first_event + MAX_DELAY - now
                    wait = min(quiet, overdue)
                else:
                    wait = next_reconcile - now
                if wait > 0:
                    self._cond.wait(timeout=min(wait, 1.0))
                    continue
                if self._first_event:
                    paths, self._pending = self._pending, set()
                    relayout, rescan = self._relayout, self._rescan
                    self._relayout = self._rescan = False
                    self._first_event = self._last_event = 0.0
                else:
                    paths, relayout, rescan = set(), False, True
                self._urgent = False
                self._busy = bool(paths or relayout or rescan)
                if not self._busy:
                    self._cond.notify_all()  # nothing to sync: a settling search goes on
                    continue
            if rescan and not paths and not relayout:
                next_reconcile = time.monotonic() + self.reconcile_every
            try:
                self._sync(paths, relayout=relayout, rescan=rescan)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _beat(self) -> None:
        try:
            _heartbeat.beat(self.root)
        except OSError as exc:  # a read-only root: searches simply keep their stat pass
            log.debug("memo watch: no heartbeat (%s)", exc)

    def _sync(self, paths: set[Path], *, relayout: bool, rescan: bool) -> None:
        try:
            if relayout:
                self.library.layout(refresh=True)
            reports = self.library.index() if rescan else self.library.sync_files(sorted(paths))
            if rescan and paths:
                reports += self.library.sync_files(sorted(paths))
        except Exception as exc:  # keep watching; the next event or reconcile retries
            message = f"memo watch: sync failed ({exc}); will retry on the next change"
            log.error(message)
            self.errors.append(message)
            return
        self.syncs += 1
        if self.on_sync is not None:
            self.on_sync(reports)
