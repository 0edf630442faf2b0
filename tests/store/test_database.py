from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest

from tideline.errors import DatabaseLocked, HomeNotWritable, NotADatabase, SchemaTooNew
from tideline.store import Database, Migrations, open_database
from tideline.upkeep._pages import PageFile


def _migrations(upto: int) -> Migrations:
    m = Migrations("test")

    @m.step(1)
    def _one(db: Database) -> None:
        db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")

    if upto >= 2:

        @m.step(2)
        def _two(db: Database) -> None:
            db.execute("ALTER TABLE notes ADD COLUMN tag TEXT DEFAULT 'none'")

    return m


def test_open_sets_wal_foreign_keys_and_vec(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db", _migrations(1))
    assert db.scalar("PRAGMA journal_mode") == "wal"
    assert db.scalar("PRAGMA foreign_keys") == 1
    assert db.vec_enabled
    assert db.scalar("SELECT vec_version()").startswith("v")


def test_old_version_file_upgrades_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with open_database(path, _migrations(1)) as db:
        db.execute("INSERT INTO notes(text) VALUES ('kept')")
    m2 = _migrations(2)
    with open_database(path, _migrations(1)) as db:
        assert m2.pending(db) == [2]  # pending() only reads
        assert m2.pending(db) == [2]
    with open_database(path, m2) as db:
        assert db.rows("SELECT text, tag FROM notes") == [{"text": "kept", "tag": "none"}]
        assert m2.applied(db) == [1, 2]
        assert m2.pending(db) == []


def test_newer_schema_is_refused_without_touching_it(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    open_database(path, _migrations(2)).close()
    with pytest.raises(SchemaTooNew, match="upgrade tideline"):
        open_database(path, _migrations(1))
    with open_database(path, _migrations(2)) as db:
        assert _migrations(2).applied(db) == [1, 2]


def test_not_a_database_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite at all, just some text" * 100)
    with pytest.raises(NotADatabase) as info:
        open_database(path, _migrations(1))
    assert "not an SQLite database" in str(info.value)
    assert "\n" not in str(info.value)
    assert path.read_bytes().startswith(b"this is not sqlite")


def test_unwritable_home_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(HomeNotWritable, match="TIDELINE_HOME"):
        open_database(blocker / "sub" / "memory.db")


def test_transaction_rolls_back_everything(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db", _migrations(1))
    with pytest.raises(RuntimeError), db.transaction():
        db.execute("INSERT INTO notes(text) VALUES ('a')")
        with db.transaction():
            db.execute("INSERT INTO notes(text) VALUES ('b')")
        raise RuntimeError("boom")
    assert db.scalar("SELECT count(*) FROM notes") == 0
    with db.transaction():
        db.execute("INSERT INTO notes(text) VALUES ('c')")
    assert db.scalar("SELECT count(*) FROM notes") == 1


def test_nested_failure_rolls_back_only_the_savepoint(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db", _migrations(1))
    with db.transaction():
        db.execute("INSERT INTO notes(text) VALUES ('outer')")
        with pytest.raises(ValueError), db.transaction():
            db.execute("INSERT INTO notes(text) VALUES ('inner')")
            raise ValueError
    assert [r["text"] for r in db.rows("SELECT text FROM notes")] == ["outer"]


def test_lock_held_past_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    holder = open_database(path, _migrations(1))
    waiter = open_database(path, busy_timeout_ms=100)
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with holder.transaction():
            holder.execute("INSERT INTO notes(text) VALUES ('held')")
            entered.set()
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    assert entered.wait(5)
    try:
        with pytest.raises(DatabaseLocked, match="retry"), waiter.transaction():
            waiter.execute("INSERT INTO notes(text) VALUES ('blocked')")
        # readers are never blocked by the writer (WAL)
        assert waiter.scalar("SELECT count(*) FROM notes") == 0
    finally:
        release.set()
        t.join()
    assert waiter.scalar("SELECT count(*) FROM notes") == 1


def test_several_migration_sets_apply_in_order_on_new_and_existing_files(tmp_path: Path) -> None:
    later = Migrations("later")

    @later.step(1)
    def _index_notes(db: Database) -> None:  # builds on the first set's table
        db.execute("CREATE INDEX notes_text ON notes(text)")

    path = tmp_path / "two.db"
    with open_database(path, _migrations(1)) as db:  # an existing file with only the first set
        db.execute("INSERT INTO notes(text) VALUES ('kept')")
    with open_database(path, _migrations(2), later) as db:
        assert db.scalar("SELECT text FROM notes") == "kept"
        recorded = db.execute("SELECT name, number FROM _migrations ORDER BY name, number")
        assert recorded.fetchall() == [("later", 1), ("test", 1), ("test", 2)]
    with open_database(tmp_path / "new.db", _migrations(1), later) as db:
        assert db.table_exists("notes_text")


def test_the_page_reader_reads_what_sqlite_wrote(tmp_path: Path) -> None:
    """`_pages` (the repair's reader below SQLite) against SQLite itself: every value kind, rows
    longer than a page (overflow chains), and an interior page over many leaves."""
    path = tmp_path / "pages.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, n, x, b, s)")
    values = [0, 1, -1, 127, -129, 40_000, 2**23, -(2**31), 2**40, -(2**62), 2.5, None]
    rows = [
        (i, values[i % len(values)], "é" * (i * 97 % 9000), bytes([i % 256]) * (i % 5), "s")
        for i in range(1, 400)
    ]
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    conn.execute("COMMIT")
    conn.close()
    pages = PageFile.open(path)
    (root,) = [v[3] for _, v in pages.rows(1) if v[1] == "t"]
    read = [(key, *vals[1:]) for key, vals in pages.rows(int(root))]  # id is stored as NULL
    assert read == rows and not pages.missing
