"""`memo_write` against people editing the same note, and retries of a write whose answer was
lost (#21: `memo write --append` lost 1 of 216 hand edits in 40 s; an append retried twice)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.library.notes import make_collection
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.errors import InvalidInput
from tideline.library import read_inside
from tideline.library._files import FileChanged, Seen, write_inside


@pytest.fixture
def log(lib_root: Path) -> Path:
    make_collection(lib_root, "log", "A running log", {"day.md": "# Day\n"})
    return lib_root / "log" / "day.md"


def _seen(root: Path, note: Path) -> Seen:
    data, st = read_inside(root, note, limit=1 << 20)
    return Seen.of(data, st)


def test_a_hand_edit_between_the_read_and_the_write_is_never_overwritten(
    lib_root: Path, log: Path
) -> None:
    seen = _seen(lib_root, log)
    log.write_text("# Day\n\nwritten by hand\n")  # the person's editor saves meanwhile
    with pytest.raises(FileChanged):
        write_inside(lib_root, log, b"# Day\n\nthe writer's stale version\n", seen)
    assert log.read_text() == "# Day\n\nwritten by hand\n"


def test_a_same_size_edit_that_restores_the_mtime_is_seen_by_its_bytes(
    lib_root: Path, log: Path
) -> None:
    seen = _seen(lib_root, log)
    st = log.stat()
    with log.open("r+b") as f:  # `touch -r`: same inode, size and mtime, other bytes
        f.write(b"# Dax\n")
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(FileChanged):
        write_inside(lib_root, log, b"# Day\n\nappended\n", seen)
    assert log.read_bytes() == b"# Dax\n"


def test_a_note_created_meanwhile_is_not_replaced(lib_root: Path, log: Path) -> None:
    fresh = log.with_name("new.md")
    fresh.write_text("made by hand a moment ago\n")
    with pytest.raises(FileChanged):
        write_inside(lib_root, fresh, b"the writer thought it was new\n", None)
    assert fresh.read_text() == "made by hand a moment ago\n"
    assert [p.name for p in log.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_appends_while_a_person_keeps_editing_never_lose_a_hand_edit(
    lib_root: Path, log: Path
) -> None:
    """An editor thread saves the note every few milliseconds (atomic replace, as editors do)
    while the agent appends: every line saved by hand is in the note at the end. (The editor's
    own read-modify-write may drop an agent line: that is the editor's race, not memo's.)"""
    stop = threading.Event()
    saved: list[str] = []

    def edit() -> None:
        while not stop.wait(0.02):  # 50 saves a second (the hostile run: 5), not a busy loop
            line = f"hand {len(saved) + 1}"
            tmp = log.with_name(".day.md.swp")
            tmp.write_text(log.read_text() + line + "\n")
            tmp.replace(log)
            saved.append(line)

    editor = threading.Thread(target=edit)
    editor.start()
    try:
        with library_from(DEFAULTS, lib_root) as lib:
            for i in range(60):
                lib.write("log/day.md", f"agent {i}", append=True)
    finally:
        stop.set()
        editor.join()
    lines = set(log.read_text().splitlines())
    assert saved and [s for s in saved if s not in lines] == []


def test_an_append_sent_again_with_its_key_is_added_once(lib_root: Path, log: Path) -> None:
    with library_from(DEFAULTS, lib_root) as lib:
        first = lib.write("log/day.md", "- fed the cat", append=True, idempotency_key="a1")
        again = lib.write("log/day.md", "- fed the cat", append=True, idempotency_key="a1")
        assert (first.replayed, again.replayed) == (False, True)
        assert again.added_at_line == first.added_at_line and again.bytes == first.bytes
        assert log.read_text().count("- fed the cat") == 1
        with pytest.raises(InvalidInput, match="was used for another memo_write request"):
            lib.write("log/day.md", "- fed the dog", append=True, idempotency_key="a1")
        lib.write("log/day.md", "- fed the cat", append=True, idempotency_key="a2")
    assert log.read_text().count("- fed the cat") == 2  # a new key: a new append
    assert (lib_root / ".memo" / "writes.db").is_file()


def test_a_creation_retried_without_a_key_is_answered_not_refused(
    lib_root: Path, log: Path
) -> None:
    with library_from(DEFAULTS, lib_root) as lib:
        first = lib.write("log/plan.md", "# Plan\n\nsail on Friday\n")
        again = lib.write("log/plan.md", "# Plan\n\nsail on Friday\n")
        assert first.created and again.created and again.replayed
        assert (again.bytes, again.lines) == (first.bytes, first.lines)
        with pytest.raises(InvalidInput, match="already exists"):
            lib.write("log/plan.md", "# Plan\n\nsail on Saturday\n")
    assert (lib_root / "log/plan.md").read_text() == "# Plan\n\nsail on Friday\n"
