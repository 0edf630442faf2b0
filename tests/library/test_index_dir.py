"""`.memo/` is memo's own folder: never written through a link, never emptied when foreign, and
rebuilt when what is inside is damaged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import apsw
import pytest
from typer.testing import CliRunner

from tests.library.notes import make_collection, write
from tideline.app import library_from
from tideline.cli.memo import app
from tideline.config import DEFAULTS
from tideline.library import IndexDirRefused

NOTES = {"n.md": "# Note\n\nThe heron nests by the weir.\n"}


def _foreign(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """Someone else's folder that happens to hold files named like ours (a real SQLite file)."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    conn = apsw.Connection(str(folder / "index.db"))
    conn.execute("CREATE TABLE theirs(x); INSERT INTO theirs VALUES (1)")
    conn.close()
    (folder / "state.json").write_text('{"theirs": 1}')
    return folder, {p.name: p.read_bytes() for p in folder.iterdir()}


def _memo(lib_root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, [*args, "--root", str(lib_root)], catch_exceptions=False)
    return result.exit_code, result.stderr


def test_a_symlinked_memo_is_refused_and_its_target_left_alone(
    lib_root: Path, tmp_path: Path
) -> None:
    make_collection(lib_root, "c", "Birds", NOTES)
    target, files = _foreign(tmp_path)
    os.symlink(target, lib_root / "c/.memo")
    with library_from(DEFAULTS, lib_root, None) as lib:
        with pytest.raises(IndexDirRefused, match=r"c/\.memo is a symlink.*rm "):
            lib.index()
        with pytest.raises(IndexDirRefused):
            lib.reindex("c", full=True)
        with pytest.raises(IndexDirRefused):
            lib.search("heron", "c", mode="lex")
        (entry,) = lib.status()["collections"]
        assert not entry["indexed"] and "is a symlink" in entry["error"]
    code, err = _memo(lib_root, "reindex", "c", "--full")
    assert code != 0 and "is a symlink" in err and len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in target.iterdir()} == files  # nothing added or deleted


def test_a_memo_that_is_a_file_or_holds_foreign_files_is_refused(lib_root: Path) -> None:
    make_collection(lib_root, "a", "File", NOTES)
    make_collection(lib_root, "b", "Foreign", NOTES)
    write(lib_root, "a/.memo", "not a folder")
    write(lib_root, "b/.memo/index.db", "someone's notes, not an index")
    write(lib_root, "b/.memo/diary.txt", "dear diary")
    with library_from(DEFAULTS, lib_root, None) as lib:
        with pytest.raises(IndexDirRefused, match=r"a/\.memo is not a folder"):
            lib.reindex("a", full=True)
        with pytest.raises(IndexDirRefused, match=r"holds files memo did not write \(diary\.txt\)"):
            lib.reindex("b", full=True)
    assert (lib_root / "a/.memo").read_text() == "not a folder"
    assert (lib_root / "b/.memo/index.db").read_text() == "someone's notes, not an index"


def test_new_indexes_are_marked_and_older_unmarked_ones_are_adopted(lib_root: Path) -> None:
    make_collection(lib_root, "c", "Birds", NOTES)
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
        lib.route("heron")
    marker = lib_root / "c/.memo/CACHEDIR.TAG"
    assert marker.read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (lib_root / ".memo/CACHEDIR.TAG").exists()  # the router's folder at the root
    marker.unlink()  # as written by the version before the marker
    with library_from(DEFAULTS, lib_root, None) as lib:
        (report,) = lib.index()
        assert report.noop and not report.warnings  # adopted as it is, not rebuilt
    assert marker.exists()


def test_index_db_replaced_by_a_folder_is_rebuilt(lib_root: Path) -> None:
    make_collection(lib_root, "c", "Birds", NOTES)
    db = lib_root / "c/.memo/index.db"
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.mkdir()
    with library_from(DEFAULTS, lib_root, None) as lib:
        result = lib.search("heron", "c", mode="lex")
        assert result.hits and any("index.db is not a file" in w for w in result.warnings)
    db.unlink()
    db.mkdir()
    code, err = _memo(lib_root, "reindex", "c", "--full", "--json")
    assert code == 0, err
    assert db.is_file()


def test_index_db_folder_with_files_in_it_is_a_one_line_error(lib_root: Path) -> None:
    make_collection(lib_root, "c", "Birds", NOTES)
    write(lib_root, "c/.memo/index.db/keep.txt", "not ours to delete")
    code, err = _memo(lib_root, "reindex", "c", "--full")
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert "index.db is a folder with files in it" in err
    assert (lib_root / "c/.memo/index.db/keep.txt").exists()


def test_a_refused_index_db_folder_is_not_announced_as_rebuilt(
    lib_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A real process prints log warnings on stderr: "rebuilt" before the refusal was false."""
    make_collection(lib_root, "c", "Birds", NOTES)
    write(lib_root, "c/.memo/index.db/keep.txt", "not ours to delete")
    with library_from(DEFAULTS, lib_root, None) as lib, pytest.raises(IndexDirRefused):
        lib.search("heron", "c", mode="lex")
    assert [r.getMessage() for r in caplog.records if "rebuilt" in r.getMessage()] == []


def test_a_linked_index_db_is_unlinked_never_opened(lib_root: Path, tmp_path: Path) -> None:
    make_collection(lib_root, "c", "Birds", NOTES)
    target, files = _foreign(tmp_path)
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
    db = lib_root / "c/.memo/index.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    os.symlink(target / "index.db", db)
    with library_from(DEFAULTS, lib_root, None) as lib:
        assert lib.search("heron", "c", mode="lex").hits
        status = lib.status("c")["collections"][0]
        assert status["files"] == 1 and "error" not in status
    assert not db.is_symlink()
    assert {p.name: p.read_bytes() for p in target.iterdir()} == files
    assert json.loads((lib_root / "c/.memo/state.json").read_text())["schema"] == 1
