"""Nothing outside the library root is ever read: notes, `_meta.yaml` and `_registry.yaml` are
opened without following links out, checked on what was opened, not on what was listed."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.library.notes import make_collection, write
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.library import LinkOutside, PathOutsideLibrary, UnreadableFile, read_inside

SECRET = "zebracorn"


def test_read_inside_reads_plain_files_and_links_that_stay_inside(
    lib_root: Path, tmp_path: Path
) -> None:
    note = write(lib_root, "c/sub/n.md", "# n\n\nhello\n")
    os.symlink(note, lib_root / "c/alias.md")
    data, st = read_inside(lib_root, note, limit=1000)
    assert data == b"# n\n\nhello\n" and st.st_ino == note.stat().st_ino
    assert read_inside(lib_root, lib_root / "c/alias.md", limit=1000)[0] == data


def test_read_inside_refuses_links_out_at_any_depth(lib_root: Path, tmp_path: Path) -> None:
    secret = write(tmp_path, "out/secret.md", f"# s\n\n{SECRET}\n")
    write(lib_root, "c/n.md", "# n\n")
    os.symlink(secret, lib_root / "c/link.md")
    os.symlink(secret.parent, lib_root / "c/sub")  # a folder on the way is a link out
    for path in (lib_root / "c/link.md", lib_root / "c/sub/secret.md"):
        with pytest.raises(LinkOutside, match="links outside the library"):
            read_inside(lib_root, path, limit=1000)
    with pytest.raises(PathOutsideLibrary, match="outside the library"):
        read_inside(lib_root, tmp_path / "out/secret.md", limit=1000)


def test_read_inside_refuses_fifos_without_blocking_and_large_files(lib_root: Path) -> None:
    write(lib_root, "c/n.md", "# n\n")
    os.mkfifo(lib_root / "c/pipe.md")
    with pytest.raises(UnreadableFile, match=r"c/pipe\.md: not a regular file"):
        read_inside(lib_root, lib_root / "c/pipe.md", limit=1000)
    big = write(lib_root, "c/big.md", "x" * 2000)
    with pytest.raises(UnreadableFile, match="larger than 1000 bytes"):
        read_inside(lib_root, big, limit=1000)


def test_a_note_swapped_for_a_link_out_never_reaches_the_index(
    lib_root: Path, tmp_path: Path
) -> None:
    """The race of the fault run: list a note, swap it for a link to a secret, read it."""
    secret = write(tmp_path, "secret.md", f"# Secret\n\n{SECRET} password hunter2 {'x' * 40}\n")
    make_collection(lib_root, "c", "Race", {"n.md": "# Public\n\nharmless words\n"})
    note, real_tmp, link_tmp = lib_root / "c/n.md", lib_root / "c/.real", lib_root / "c/.link"
    stop = threading.Event()

    def swap() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            if i % 2:
                os.symlink(secret, link_tmp)
                os.replace(link_tmp, note)
            else:
                real_tmp.write_text(f"# Public\n\nharmless words {i}\n", encoding="utf-8")
                os.replace(real_tmp, note)

    swapper = threading.Thread(target=swap, daemon=True)
    leaks = []
    with library_from(DEFAULTS, lib_root, None) as lib:
        swapper.start()
        try:
            for n in range(300):
                result = lib.search(f"{SECRET} hunter2", "c", mode="lex")
                leaks += [(n, h.text) for h in result.hits if SECRET in h.text]
                if n % 50 == 0:
                    lib.index()
        finally:
            stop.set()
            swapper.join()
        final = lib.search(SECRET, "c", mode="lex")
    assert leaks == [] and final.hits == []


def test_meta_and_registry_linked_from_outside_are_never_read(
    lib_root: Path, tmp_path: Path
) -> None:
    make_collection(lib_root, "d", "Plain collection", {"n.md": "# n\n\nplans\n"})
    foreign = write(tmp_path, "foreign.yaml", f"description: {SECRET} plans\n")
    write(lib_root, "c/n.md", "# n\n\nmore plans\n")
    os.symlink(foreign, lib_root / "c/_meta.yaml")
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
        status = lib.status()
        assert SECRET not in json.dumps(status)
        (problem,) = [p for p in status["problems"] if p["kind"] == "bad-meta"]
        assert problem["path"] == "c" and "links outside the library" in problem["message"]
        assert SECRET not in json.dumps(lib.route("plans").to_dict())
        registry = lib_root / "_registry.yaml"
        assert SECRET not in registry.read_text()

        outside_registry = write(
            tmp_path, "reg.yaml", f"collections:\n  x:\n    description: {SECRET}\n"
        )
        registry.unlink()
        os.symlink(outside_registry, registry)
        assert SECRET not in json.dumps(lib.route("plans").to_dict())
    assert not registry.is_symlink() and SECRET not in registry.read_text()
