"""The catch-up without a watcher: a stat pass over every note vouches for a collection for
`recheck` seconds while its folders stay as listed; in between a search stats the folders only,
finds every note added, removed or replaced at once, and says how old the notes' check is."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import wait_until
from tests.library.notes import make_collection, write
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.errors import InvalidInput
from tideline.library import Library

RACY = 6.0  # a folder changed under 2 s before its listing cannot vouch; poll past that


def _vouched(lib: Library, path: str = "c") -> bool:
    """A search that stats the folders only (the last full pass still vouches)."""
    return lib.search("anything", path, mode="lex").fresh_by == "folders"


def _paths(lib: Library, query: str, path: str = "c") -> list[str]:
    return [h.path for h in lib.search(query, path, mode="lex").hits]


@contextmanager
def _edited_in_place(lib_root: Path, name: str) -> Iterator[Library]:
    """A library (recheck 3600) whose stat pass vouches for collection `c`, and then its note
    `name` rewritten in place from "alpaca" to "walrus"."""
    make_collection(lib_root, "c", "Notes", {name: "# Note\n\nThe password is alpaca.\n"})
    with library_from(DEFAULTS, lib_root, None, recheck=3600) as lib:
        lib.index()
        wait_until(lambda: _vouched(lib), timeout=RACY)
        write(lib_root, f"c/{name}", "# Note\n\nThe password is walrus.\n")
        yield lib


def test_a_note_added_removed_or_replaced_is_found_at_once(lib_root: Path, tmp_path: Path) -> None:
    make_collection(
        lib_root,
        "c",
        "Notes",
        {"old.md": "# Old\n\nThe password is alpaca.\n", "sub/deep.md": "# Deep\n\nA heron.\n"},
    )
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nThe vault code is zebra.\n", encoding="utf-8")
    with library_from(DEFAULTS, lib_root, None, recheck=3600) as lib:
        first = lib.search("alpaca", "c", mode="lex")
        assert first.fresh_by == "stat" and [h.path for h in first.hits] == ["c/old.md"]
        wait_until(lambda: _vouched(lib), timeout=RACY)
        assert 0 < lib.search("alpaca", "*", mode="lex").stat_age < 3600

        write(lib_root, "c/new.md", "# New\n\nA zeppelin schedule.\n")  # added
        found = lib.search("zeppelin", "c", mode="lex")
        assert [h.path for h in found.hits] == ["c/new.md"] and found.fresh_by == "stat"

        wait_until(lambda: _vouched(lib), timeout=RACY)
        tmp = lib_root / "c/.old.md.swp"  # an editor's atomic save: write aside, rename over
        tmp.write_text("# Old\n\nThe password is walrus.\n", encoding="utf-8")
        os.replace(tmp, lib_root / "c/old.md")
        assert _paths(lib, "walrus") == ["c/old.md"] and _paths(lib, "alpaca") == []

        wait_until(lambda: _vouched(lib), timeout=RACY)
        (lib_root / "c/sub/deep.md").unlink()  # removed, one folder down
        assert _paths(lib, "heron") == []

        wait_until(lambda: _vouched(lib), timeout=RACY)
        write(lib_root, "c/sub/later.md", "# Later\n\nA pelican.\n")  # added in a subfolder
        assert _paths(lib, "pelican") == ["c/sub/later.md"]

        wait_until(lambda: _vouched(lib), timeout=RACY)
        link = lib_root / "c/.link.tmp"  # a note swapped for a link out of the library
        link.symlink_to(outside)
        os.replace(link, lib_root / "c/new.md")
        assert _paths(lib, "zebra") == [] and _paths(lib, "zeppelin") == []
        skipped = lib.status("c")["collections"][0]["skipped"]
        assert [s["path"] for s in skipped] == ["c/new.md"]


def test_an_edit_in_place_is_told_until_the_next_pass_finds_it(lib_root: Path) -> None:
    """An edit in place changes no folder: the search says how old its check of the notes is,
    and the pass `recheck` seconds later (or any library with recheck 0) finds the edit."""
    with _edited_in_place(lib_root, "n.md") as lib:
        stale = lib.search("walrus", "c", mode="lex")
        assert stale.hits == [] and stale.fresh_by == "folders" and stale.stat_age > 0
        assert stale.to_dict()["stat_age"] == stale.stat_age
        with library_from(DEFAULTS, lib_root, None, recheck=0) as every:
            fresh = every.search("walrus", "c", mode="lex")
            assert [h.path for h in fresh.hits] == ["c/n.md"] and fresh.fresh_by == "stat"
    with library_from(DEFAULTS, lib_root, None, recheck=0.3) as lib:
        lib.search("walrus", "c", mode="lex")
        wait_until(lambda: _vouched(lib), timeout=RACY)
        (lib_root / "c/n.md").write_text("# Note\n\nThe password is narwhal.\n", encoding="utf-8")
        wait_until(lambda: _paths(lib, "narwhal") == ["c/n.md"], timeout=RACY)


def test_a_file_or_folder_search_still_stats_its_notes(lib_root: Path) -> None:
    with _edited_in_place(lib_root, "sub/n.md") as lib:
        for path in ("c/sub/n.md", "c/sub"):
            found = lib.search("walrus", path, mode="lex")
            assert [h.path for h in found.hits] == ["c/sub/n.md"] and found.fresh_by == "stat"


def test_recheck_out_of_range_is_refused(lib_root: Path) -> None:
    make_collection(lib_root, "c", "Notes", {"n.md": "# Note\n\nText.\n"})
    for bad in (-1.0, 1e9):
        with pytest.raises(InvalidInput, match="library_recheck"):
            library_from(DEFAULTS, lib_root, None, recheck=bad)


_SEARCHES = """
import os, sys
from tideline.app import library_from
from tideline.config import DEFAULTS
lib = library_from(DEFAULTS, sys.argv[1], None, recheck=3600)
lib.search("anything", "*", mode="lex")  # every note not yet vouched for is statted
assert lib.search("anything", "*", mode="lex").fresh_by == "folders"
lib.layout(refresh=True)  # the tree's layout is rescanned every 10 s: not inside the count
os.path.exists("/searches-begin")  # markers in the trace
for _ in range(5):
    assert lib.search("heron", "*", mode="lex").hits
os.path.exists("/searches-end")
"""


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (Debian package)")
def test_a_search_stats_the_folders_not_every_note(lib_root: Path) -> None:
    """Counted in the system calls of a real process over real folders: five searches of 300
    notes in 3 collections stat no note and list no folder, only stat the folders."""
    for c in ("a", "b", "c"):
        notes = {f"sub/n{i}.md": f"# Note {i}\n\nA heron, number {i}.\n" for i in range(100)}
        make_collection(lib_root, c, "Notes", notes)
    # indexed here, so the folders can settle first
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
    folders = [d for d, _, _ in os.walk(lib_root) if "/.memo" not in d]
    wait_until(  # a folder changed under 2 s before its listing cannot vouch
        lambda: min(time.time() - os.stat(d).st_ctime for d in folders) >= 2.5, timeout=10
    )
    trace = lib_root.parent / "trace.txt"
    strace = ["strace", "-f", "-o", str(trace), "-e", "trace=%file,newfstatat,statx"]
    subprocess.run(
        [*strace, sys.executable, "-c", _SEARCHES, str(lib_root)],
        check=True,
        timeout=120,
    )
    calls = trace.read_text(encoding="utf-8").split("/searches-begin", 1)[1]
    calls = calls.split("/searches-end", 1)[0].splitlines()
    inside = [line for line in calls if f'"{lib_root}' in line and "/.memo" not in line]
    folders = {str(lib_root / c / d).rstrip("/") for c in "abc" for d in ("", "sub")}
    statted = [re.search(r'"([^"]+)"', line)[1] for line in inside if "stat" in line]  # type: ignore[index]
    assert not [line for line in inside if ".md" in line]  # no note is statted or opened
    assert not [line for line in inside if "O_DIRECTORY" in line]  # no folder is listed
    assert set(statted) <= folders | {str(lib_root)} and folders <= set(statted)
    assert len(statted) <= 5 * (len(folders) + 2)
