"""The watcher makes a hand edit searchable within a second, deciding changes by hash."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.helpers import wait_until
from tests.library.corpus import build
from tests.library.notes import make_collection
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.embed import Embedder
from tideline.library import CollectionIndex, Watcher, scan_library


def _index_has(root: Path, rel: str, word: str) -> bool:
    """Look in the index without any catch-up: only what the watcher wrote is visible."""
    collection = scan_library(root).by_rel()[rel]
    idx = CollectionIndex(collection, None)
    try:
        return bool(idx.text.lexical(word, 5))
    finally:
        idx.close()


def test_hand_edit_is_searchable_within_one_second(lib_root: Path, e5: Embedder) -> None:
    build(lib_root)
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
        with Watcher(lib, debounce=0.5) as watcher:
            note = lib_root / "infra/runbook.md"
            started = time.monotonic()
            with note.open("a", encoding="utf-8") as fh:  # like `echo >> note.md`
                fh.write("\n## Jump host\n\nThe bastion is called quokka-gateway-17.\n")
            wait_until(lambda: _index_has(lib_root, "infra", "quokka"), timeout=5)
            elapsed = time.monotonic() - started
            assert elapsed < 1.0, f"visible after {elapsed:.2f}s"

            # an atomic save (write a temp file, rename over) is one change, found by hash
            syncs = watcher.syncs
            tmp = lib_root / "infra/.runbook.md.tmp"
            tmp.write_text(note.read_text() + "\nWombat sighting.\n", encoding="utf-8")
            tmp.replace(note)
            # the index commits before the watcher counts its sync: wait for both
            wait_until(
                lambda: _index_has(lib_root, "infra", "wombat") and watcher.syncs > syncs,
                timeout=5,
            )

            # a new collection appears while watching
            make_collection(
                lib_root, "trips", "Travel", {"ferry.md": "# Ferry\n\nPlatypus pier.\n"}
            )
            wait_until(
                lambda: (
                    (lib_root / "trips/.memo/index.db").exists()
                    and _index_has(lib_root, "trips", "platypus")
                ),
                timeout=10,
            )
            # deleting a note removes it from the index
            (lib_root / "life/home/books.md").unlink()
            wait_until(lambda: not _index_has(lib_root, "life/home", "bulgakov"), timeout=5)
        assert not watcher.errors


def test_touch_without_change_does_not_reindex(lib_root: Path, e5: Embedder) -> None:
    build(lib_root)
    reports = []
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
        with Watcher(lib, debounce=0.2, on_sync=reports.extend) as watcher:
            note = lib_root / "life/home/home.md"
            note.write_bytes(note.read_bytes())  # same bytes, new mtime
            wait_until(lambda: watcher.syncs >= 1, timeout=5)
        assert reports and all(r.changed == 0 and r.chunks_written == 0 for r in reports)


def test_an_edit_keeping_size_and_mtime_is_indexed_by_the_watcher(lib_root: Path) -> None:
    make_collection(lib_root, "c", "Edits", {"n.md": "# Note\n\nThe password is alpaca.\n"})
    note = lib_root / "c/n.md"
    os.utime(note, (1_000_000_000, 1_000_000_000))
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
        with Watcher(lib, debounce=0.2) as watcher:
            before = note.stat()
            note.write_text("# Note\n\nThe password is walrus.\n", encoding="utf-8")
            os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))  # like `touch -r`
            wait_until(lambda: _index_has(lib_root, "c", "walrus"), timeout=5)
            assert not _index_has(lib_root, "c", "alpaca")
        assert not watcher.errors


def test_editor_save_patterns_are_all_indexed(lib_root: Path) -> None:
    """vim (4913 probe, backup rename, rewrite), delete + recreate, rapid writes, renames."""
    make_collection(lib_root, "c", "Edits", {"n.md": "# Note\n\nfirst aardvark\n"})
    note = lib_root / "c/n.md"
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
        with Watcher(lib, debounce=0.2) as watcher:
            probe = lib_root / "c/4913"
            probe.write_text("")
            probe.unlink()
            note.rename(lib_root / "c/n.md~")
            note.write_text("# Note\n\nvim saved bandicoot\n", encoding="utf-8")
            (lib_root / "c/n.md~").unlink()
            wait_until(lambda: _index_has(lib_root, "c", "bandicoot"), timeout=5)

            note.unlink()
            note.write_text("# Note\n\nrecreated capybara\n", encoding="utf-8")
            wait_until(lambda: _index_has(lib_root, "c", "capybara"), timeout=5)

            for i in range(50):
                note.write_text(f"# Note\n\nrapid write {i} dingo{i}\n", encoding="utf-8")
            wait_until(lambda: _index_has(lib_root, "c", "dingo49"), timeout=8)

            note.rename(lib_root / "c/moved.md")
            wait_until(lambda: _paths_in_index(lib_root, "c") == {"c/moved.md"}, timeout=5)
            (lib_root / "c/sub").mkdir()
            (lib_root / "c/moved.md").rename(lib_root / "c/sub/moved.md")
            (lib_root / "c/sub").rename(lib_root / "c/folder")
            wait_until(lambda: _paths_in_index(lib_root, "c") == {"c/folder/moved.md"}, timeout=8)
        assert not watcher.errors


def _paths_in_index(root: Path, rel: str) -> set[str]:
    collection = scan_library(root).by_rel()[rel]
    idx = CollectionIndex(collection, None)
    try:
        return {r[0] for r in idx.db.execute("SELECT path FROM files")}
    finally:
        idx.close()


def test_search_trusts_a_running_watcher_instead_of_stat(lib_root: Path) -> None:
    """With a watcher, search skips the stat pass: this process's watcher syncs the events it
    has seen first (no debounce wait); another process would trust the fresh heartbeat."""
    build(lib_root)
    with (
        library_from(DEFAULTS, lib_root, None) as lib,
        library_from(DEFAULTS, lib_root, None) as other,
    ):
        lib.index()
        assert lib.search("runbook", "infra", mode="lex").fresh_by == "stat"
        with Watcher(lib, debounce=60.0) as watcher:
            note = lib_root / "infra/runbook.md"
            with note.open("a", encoding="utf-8") as fh:
                fh.write("\nThe bastion is called numbat-gateway-3.\n")
            wait_until(lambda: watcher.pending == 1, timeout=5)
            found = lib.search("numbat", "infra", mode="lex")
            assert found.fresh_by == "watcher" and found.hits  # settled, not after 60 s
            assert other.search("numbat", "infra", mode="lex").fresh_by == "watcher"  # heartbeat
        assert not (lib_root / ".memo-watch").exists()
        assert other.search("numbat", "infra", mode="lex").fresh_by == "stat"
    with library_from(DEFAULTS, lib_root, None, catch_up="stat") as strict, Watcher(strict):
        assert strict.search("numbat", "infra", mode="lex").fresh_by == "stat"
