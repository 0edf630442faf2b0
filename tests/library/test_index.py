"""Indexing: incremental, hash-decided, self-repairing, and never writing the markdown."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from typer.testing import CliRunner

from tests import damage
from tests.helpers import wait_until
from tests.library.corpus import build
from tests.library.notes import make_collection, write
from tideline.app import library_from
from tideline.cli.memo import app as memo_app
from tideline.config import DEFAULTS
from tideline.embed import Embedder


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*.md")
    }


def test_index_creates_per_collection_indexes_and_reindex_is_a_noop(
    lib_root: Path, e5: Embedder
) -> None:
    build(lib_root)
    before = _digests(lib_root)
    with library_from(DEFAULTS, lib_root, e5) as lib:
        first = lib.index()
        assert {r.collection for r in first} == {"infra", "life/home"}
        assert all(r.changed > 0 and r.embedded > 0 for r in first)
        registry_mtime = (lib_root / "_registry.yaml").stat().st_mtime_ns
        second = lib.index()
        assert all(r.noop and r.unchanged == r.scanned for r in second)
        assert (lib_root / "_registry.yaml").stat().st_mtime_ns == registry_mtime
    assert (lib_root / "infra/.memo/index.db").exists()
    assert (lib_root / "life/home/.memo/index.db").exists()
    state = json.loads((lib_root / "infra/.memo/state.json").read_text())
    assert state["chunker"] == "headings-v1" and state["embedder"] == e5.model_id
    assert _digests(lib_root) == before  # the markdown is never written
    registry = (lib_root / "_registry.yaml").read_text()
    assert "infra:" in registry and "files: 1" in registry


def test_touch_without_change_is_decided_by_the_hash(lib_root: Path, e5: Embedder) -> None:
    build(lib_root)
    note = lib_root / "infra/runbook.md"
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
        os.utime(note, (1_000_000_000, 1_000_000_000))  # a new mtime, the same bytes
        (report, _) = lib.index()
        assert report.collection == "infra" and report.noop and report.chunks_written == 0


def test_an_edit_keeping_size_and_mtime_is_found_by_the_next_search(lib_root: Path) -> None:
    """`cp -p`, `rsync -t`, `touch -r`: the stat pass compares ctime and inode too."""
    make_collection(lib_root, "c", "Edits", {"n.md": "# Note\n\nThe password is alpaca.\n"})
    note = lib_root / "c/n.md"
    os.utime(note, (1_000_000_000, 1_000_000_000))  # long before any check: not racy
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.index()
        before = note.stat()
        note.write_text("# Note\n\nThe password is walrus.\n", encoding="utf-8")
        os.utime(note, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = note.stat()
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        assert lib.status("c")["collections"][0]["behind"] == 1
        hits = lib.search("walrus", "c", mode="lex").hits
        assert [h.path for h in hits] == ["c/n.md"]
        assert lib.search("alpaca", "c", mode="lex").hits == []
        assert lib.status("c")["collections"][0]["behind"] == 0
        (again,) = lib.index()
        assert again.noop


def test_edit_reembeds_only_the_changed_section(lib_root: Path, e5: Embedder) -> None:
    build(lib_root)
    note = lib_root / "infra/runbook.md"
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
        note.write_text(note.read_text().replace("every 60 days", "every 45 days"))
        (report,) = lib.reindex("infra")
        assert report.changed == 1
        assert report.embedded == 1  # only the TLS section's text is new
        assert report.reused_vectors == 0  # the other sections kept their vectors in place


def test_identical_files_are_embedded_once(lib_root: Path, e5: Embedder) -> None:
    text = "# Same\n\nExactly the same words in two files about kayaks.\n"
    make_collection(lib_root, "c", "Copies", {"a.md": text, "b.md": text})
    with library_from(DEFAULTS, lib_root, e5) as lib:
        (report,) = lib.index()
        assert report.changed == 2
        # the file name is part of what BM25 sees, not of the embedded text
        assert report.embedded == 1 and report.reused_vectors == 1


def test_bad_files_are_skipped_by_name_and_the_rest_is_indexed(
    lib_root: Path, e5: Embedder
) -> None:
    make_collection(lib_root, "c", "Mixed files", {"good.md": "# Good\n\nfine text\n"})
    (lib_root / "c/binary.md").write_bytes(b"\x00\x01\x02 not text")
    (lib_root / "c/latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    write(lib_root, "c/huge.md", "# Huge\n" + "x" * 5000)
    with library_from(DEFAULTS, lib_root, e5, max_file_bytes=4000) as lib:
        (report,) = lib.index()
        messages = " | ".join(p.message for p in report.skipped)
        assert "c/binary.md: binary content" in messages
        assert "c/latin1.md: not valid UTF-8" in messages
        assert "c/huge.md: larger than 4000 bytes" in messages
        assert lib.search("fine text", "c", mode="lex").hits[0].path == "c/good.md"
        status = lib.status("c")["collections"][0]
        assert status["files"] == 1 and len(status["skipped"]) == 3
        (again,) = lib.index()
        assert again.noop  # skipped files are remembered, not re-read


def test_version_mismatch_rebuilds_the_collection(lib_root: Path, e5: Embedder) -> None:
    build(lib_root)
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
    state_path = lib_root / "infra/.memo/state.json"
    state = json.loads(state_path.read_text())
    state["chunker"] = "headings-v0"
    state_path.write_text(json.dumps(state))
    with library_from(DEFAULTS, lib_root, e5) as lib:
        reports = {r.collection: r for r in lib.index()}
        assert any("chunker 'headings-v0' -> 'headings-v1'" in w for w in reports["infra"].warnings)
        assert reports["infra"].changed == 1 and reports["life/home"].noop


def test_corrupt_or_missing_index_rebuilds_lazily_with_a_warning(
    lib_root: Path, e5: Embedder
) -> None:
    build(lib_root)
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
    db = lib_root / "infra/.memo/index.db"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not sqlite" * 100)
    with library_from(DEFAULTS, lib_root, e5) as lib:
        result = lib.search("4711", "infra", mode="lex")
        assert result.hits and result.hits[0].heading.endswith("Policy based routing")
        assert any("unusable" in w for w in result.warnings)
    import shutil

    shutil.rmtree(lib_root / "life/home/.memo")
    with library_from(DEFAULTS, lib_root, e5) as lib:
        assert lib.search("sourdough", "life/home", mode="lex").hits


def test_kill_during_indexing_is_repaired_by_the_next_run(lib_root: Path, e5: Embedder) -> None:
    notes = {
        f"n{i:03d}.md": f"# Note {i}\n\n## Part\n\nTopic number {i} is here.\n" for i in range(120)
    }
    make_collection(lib_root, "big", "Many notes", notes)
    code = (
        "import sys; from tideline.embed import E5Embedder; from tideline.app import library_from;"
        "from tideline.config import DEFAULTS;"
        "library_from(DEFAULTS, sys.argv[1], E5Embedder()).index()"
    )
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-c", code, str(lib_root)], env=env)
    db_path = lib_root / "big/.memo/index.db"

    def some_vectors() -> bool:
        if proc.poll() is not None:
            return True
        try:
            import apsw

            conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
            conn.set_busy_timeout(1000)
            n = conn.execute("SELECT count(*) FROM chunks WHERE embedded = 1").fetchall()[0][0]
            conn.close()
            return n > 0
        except Exception:
            return False

    wait_until(some_vectors, timeout=60)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL  # killed mid-way, not finished
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
        status = lib.status("big")["collections"][0]
        assert status["files"] == 120 and status["vectors_pending"] == 0
        assert status["chunks"] == 240 and status["behind"] == 0
        assert lib.search("Topic number 77", "big", mode="lex").hits[0].path == "big/n077.md"
        (again,) = lib.index()
        assert again.noop


def _garden(root: Path) -> Path:
    """40 notes, lexical index only; returns the index file."""
    make_collection(
        root,
        "garden",
        "Notes about the garden",
        {f"note{i}.md": f"# Bed {i}\n\n" + "Tomatoes. " * 200 for i in range(40)},
    )
    with library_from(DEFAULTS, root, None) as lib:
        lib.index()
    return root / "garden/.memo/index.db"


@pytest.mark.parametrize("table", ["chunks", "chunks_fts_data"])
@pytest.mark.parametrize("catch_up", [True, False])
def test_damage_met_during_a_search_rebuilds_the_index_and_answers(
    lib_root: Path, table: str, catch_up: bool
) -> None:
    """A bad page that opening never reads surfaces mid-search: the index is disposable, so it
    is thrown away, rebuilt from the notes, and the same search answers (issue 9 item 7)."""
    index = _garden(lib_root)
    damage.scribble(index, damage.middle_of(index, table))
    with library_from(DEFAULTS, lib_root, None) as lib:
        result = lib.search("tomatoes", "garden", mode="lex", catch_up=catch_up)
        assert len(result.hits) == 8
        assert lib.status("garden")["collections"][0]["files"] == 40
    if catch_up:
        assert any("thrown away and rebuilt from the markdown" in w for w in result.warnings)
    conn = apsw.Connection(str(index))
    assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    conn.close()


def test_damage_met_during_status_and_memo_search_is_not_an_error(lib_root: Path) -> None:
    index = _garden(lib_root)
    damage.scribble(index, damage.middle_of(index, "files"))
    with library_from(DEFAULTS, lib_root, None) as lib:
        assert lib.status("garden")["collections"][0]["files"] == 40
    damage.scribble(index, damage.middle_of(index, "chunks"))
    result = CliRunner().invoke(
        memo_app, ["search", "tomatoes", "--root", str(lib_root), "--mode", "lex"]
    )
    assert result.exit_code == 0 and "garden/note" in result.stdout, result.stderr


def test_damage_met_while_memo_write_indexes_its_note(lib_root: Path) -> None:
    """The note is written once (an append is not repeated); the index is rebuilt around it."""
    index = _garden(lib_root)
    damage.scribble(index, damage.middle_of(index, "files"))
    with library_from(DEFAULTS, lib_root, None) as lib:
        lib.write("garden/note0.md", "Basil beside them.\n", append=True)
        assert lib.search("basil", "garden", mode="lex", catch_up=False).hits
    assert (lib_root / "garden/note0.md").read_text().count("Basil") == 1
