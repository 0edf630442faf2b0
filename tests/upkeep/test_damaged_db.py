"""A damaged agent database: doctor names it, every command refuses it in one line, --repair
recovers what can be read into a new file and keeps the damaged one."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import random
import shutil
from pathlib import Path

import anyio
import apsw
import pytest
from mcp import Client
from typer.testing import CliRunner

from tests import damage
from tests.helpers import wait_until
from tests.mcp.conftest import error_text
from tests.profile.conftest import add_fact
from tideline.app import Tideline, library_from
from tideline.cli.main import app as cli
from tideline.clock import from_text, to_text
from tideline.config import DEFAULTS, Settings
from tideline.embed import Embedder
from tideline.errors import DatabaseDamaged, DatabaseReplaced
from tideline.mcp import build_server
from tideline.store import Database
from tideline.store._health import note_checked

TURNS, NARRATIVES = 200, 30
RECOVERABLE = [k for k in damage.KINDS if k != "not-sqlite"]
WHOLE = {"zeroed-header", "index-page", "fts-shadow", "wal-garbage"}  # no row was on a bad page


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, e5: Embedder) -> Path:
    """A healthy memory.db with turns, narratives, tags, links, FTS and vectors."""
    home = tmp_path_factory.mktemp("template")
    chat = home / "chat.jsonl"
    turns = [
        {
            "role": "user",
            "content": f"turn {i}: Anna from Porto talks about her garden, plot {i * 7}",
            "timestamp": f"2026-0{1 + i % 9}-{10 + i % 18}T10:{i % 60:02d}:00Z",
        }
        for i in range(TURNS)
    ]
    chat.write_text("".join(json.dumps(t) + "\n" for t in turns))
    app = Tideline(dataclasses.replace(Settings(), home=home), embedder=e5)
    assert app.memory.import_file(chat, "openai").turns_added == TURNS
    for i in range(NARRATIVES):
        app.memory.write(gesture=f"memory {i}: Anna's garden in Porto", tags=["family"])
    app.close()
    return home / "memory.db"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def damaged(template: Path, home: Path, kind: str) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "memory.db"
    shutil.copyfile(template, path)
    damage.KINDS[kind](path)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_one_line_refusal(path: Path, *args: str) -> None:
    code, out, err = run(*args)
    assert code == 3, (args, out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path) in err and "tideline doctor --repair" in err, err


@pytest.mark.parametrize("kind", list(damage.KINDS))
def test_doctor_reports_and_every_command_refuses(
    kind: str, template: Path, isolated_home: Path
) -> None:
    path = damaged(template, isolated_home, kind)
    before = digest(path)
    code, out, _ = run("doctor", "--json")
    report = json.loads(out)
    assert code == 1 and not report["ok"]
    [agent] = [f for f in report["files"] if f["role"] == "agent database"]
    assert agent["path"] == str(path) and not agent["ok"]
    assert any(p.startswith(str(path)) for p in report["problems"])
    for args in (("search", "Anna garden", "--turns"), ("stats",), ("write", "a new memory")):
        assert_one_line_refusal(path, *args)
    assert digest(path) == before  # judged and refused, never written


#: (seed, pages, where): the "N random pages overwritten" family (bench/faults.py runs more).
RANDOM_PAGES = [
    (1, 1, "anywhere"),
    (2, 3, "anywhere"),
    (3, 10, "anywhere"),
    (4, 10, "front"),
    (5, 10, "back"),
    (6, 4, "run"),
    (7, 40, "anywhere"),
    (8, 1, "back"),
]


@pytest.mark.parametrize(("seed", "pages", "where"), RANDOM_PAGES)
def test_random_pages_overwritten_are_never_called_healthy(
    seed: int, pages: int, where: str, template: Path, isolated_home: Path
) -> None:
    """SQLite answers quick_check with one row, `*** in database main ***` then a line per
    problem; doctor once dropped that row and said "all good" (#21). The first command on a file
    never checked refuses it (checked at open), doctor names it, and every later one refuses."""
    path = damaged(template, isolated_home, "empty")
    shutil.copyfile(template, path)
    hit = damage.random_pages(path, pages, seed, where)
    assert len(hit) == pages
    before = digest(path)
    assert_one_line_refusal(path, "stats")
    code, out, _ = run("doctor", "--json")
    report = json.loads(out)
    [agent] = [f for f in report["files"] if f["role"] == "agent database"]
    assert code == 1 and not agent["ok"] and agent["problems"], report
    assert "in database main" not in agent["problems"][0]
    for args in (("search", "Anna garden", "--turns"), ("write", "a new memory")):
        assert_one_line_refusal(path, *args)
    assert digest(path) == before


def stale_check(path: Path, hours: float) -> None:
    """Make the last sound check of `path` `hours` older than it is."""
    note = Path(f"{path}.checked.json")
    stamp = json.loads(note.read_text())
    earlier = from_text(stamp["checked"]) - dt.timedelta(hours=hours)
    note.write_text(json.dumps({**stamp, "checked": to_text(earlier)}))


def test_a_file_found_sound_is_checked_again_a_day_later(
    template: Path, isolated_home: Path
) -> None:
    """Damage no query reads (pages of the turns' trigram index, which `stats` never visits,
    picked from the file's layout) is found by the whole-file check that the first command
    after `integrity_check_hours` runs."""
    path = damaged(template, isolated_home, "empty")
    shutil.copyfile(template, path)
    assert run("stats")[0] == 0  # checked at this first open: sound, noted
    unread = damage.pages_of(path, "turn_text_tri_data")
    assert len(unread) >= 3, unread
    for page in unread[-3:]:
        damage.scribble(path, page)
    stale_check(path, 23)
    assert run("stats")[0] == 0  # checked 23 hours ago: not yet again
    stale_check(path, 2)
    assert_one_line_refusal(path, "stats")
    assert_one_line_refusal(path, "stats")  # remembered: refused at once from now on


def test_a_running_server_stops_using_a_file_doctor_found_damaged(
    template: Path, isolated_home: Path, settings: Settings
) -> None:
    path = damaged(template, isolated_home, "empty")
    shutil.copyfile(template, path)
    app = Tideline(settings)
    try:
        assert app.memory.stats()["turns"] == TURNS
        damage.random_pages(path, 5, 12, "back")
        assert run("doctor")[0] == 1  # another process finds it

        def refused() -> str:
            try:
                app.memory.stats()
            except DatabaseDamaged as exc:
                return str(exc)
            return ""

        said = wait_until(refused, timeout=10)
        assert said.startswith(str(path)) and "tideline doctor --repair" in said
    finally:
        app.close()


def test_a_running_server_refuses_a_file_replaced_under_it(
    template: Path, isolated_home: Path, settings: Settings
) -> None:
    """A repair or a restored backup swaps memory.db: the server must not go on writing into
    the old inode, where every later memory would be lost."""
    path = damaged(template, isolated_home, "empty")
    shutil.copyfile(template, path)
    app = Tideline(settings)
    try:
        app.memory.write(gesture="before the swap")
        spare = path.with_name("restored.db")
        shutil.copyfile(template, spare)
        for suffix in ("-wal", "-shm"):  # as the repair swaps: the log goes with its file
            Path(f"{path}{suffix}").replace(f"{path}.old{suffix}")
        spare.replace(path)

        def refused() -> str:
            try:
                app.memory.write(gesture="after the swap")
            except DatabaseReplaced as exc:
                return str(exc)
            return ""

        said = refused()  # the first write after the swap, not a second later
        assert "was replaced or moved" in said and "restart" in said, said

        def read_refused() -> bool:
            try:
                app.memory.stats()
            except DatabaseReplaced:
                return True
            return False

        wait_until(read_refused, timeout=10)  # and reads, within a second
    finally:
        app.close()
    fresh = Tideline(settings)
    try:
        assert fresh.memory.stats()["narratives"] == NARRATIVES  # the restored copy, untouched
    finally:
        fresh.close()


@pytest.mark.parametrize("kind", RECOVERABLE)
def test_repair_recovers_into_a_new_file_and_keeps_the_old(
    kind: str, template: Path, isolated_home: Path
) -> None:
    path = damaged(template, isolated_home, kind)
    before = digest(path)
    code, out, err = run("doctor", "--repair", "--json")
    assert code == 0, (out, err)
    data = json.loads(out)
    [repaired] = [r for r in data["repaired"] if r["role"] == "agent database"]
    assert repaired["action"] == "recovered" and data["ok"]
    kept = Path(repaired["kept"])
    assert kept.name.startswith("memory.db.damaged-") and digest(kept) == before

    code, out, _ = run("stats", "--json")
    stats = json.loads(out)
    assert code == 0
    if kind == "empty":
        assert stats["turns"] == 0
        return
    if kind in WHOLE:
        assert (stats["turns"], stats["narratives"]) == (TURNS, NARRATIVES)
        assert (stats["turn_vectors"], stats["narrative_vectors"]) == (TURNS, NARRATIVES)
    elif kind == "random-middle-page":  # the rows on that page are gone, the rest are kept
        assert 0 < stats["turns"] < TURNS and "turns" in repaired["lost"]
    else:  # truncated: whatever lay in the surviving half
        assert stats["turns"] > 0 and (repaired["lost"] or repaired["notes"])
    hits = run("search", "Anna garden Porto", "--turns", "--json", "--mode", "lex")[1]
    assert json.loads(hits)["hits"]  # full-text tables rebuilt from the recovered rows
    assert run("write", "written after the repair")[0] == 0


def test_unrecoverable_file_is_kept_unchanged(template: Path, isolated_home: Path) -> None:
    path = damaged(template, isolated_home, "not-sqlite")
    before = digest(path)
    code, out, _ = run("doctor", "--repair", "--json")
    [repaired] = json.loads(out)["repaired"]
    assert code == 1 and repaired["action"] == "failed"
    assert "cannot be recovered" in repaired["error"] and "\n" not in repaired["error"]
    assert digest(path) == before


def root_page_room(app: Tideline, table: str) -> int | None:
    """Bytes left on `table`'s only page, or None once its rows spread over more pages."""
    pages = app.memory.db.rows("SELECT unused, pagetype FROM dbstat WHERE name = ?", (table,))
    return pages[0]["unused"] if len(pages) == 1 and pages[0]["pagetype"] == "leaf" else None


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small memory.db (no vectors) whose list of tables fills the pages a truncation cuts.
    Its narratives stay on their table's first page (the file's front, made by the migration):
    as many are written as that page holds, measured on the file, so a wider row (a new column)
    writes fewer instead of moving them to the pages a truncation cuts."""
    home = tmp_path_factory.mktemp("small")
    app = Tideline(Settings.load(env={}, overrides={"home": str(home), "embedder": "none"}))
    for i in range(TURNS):
        app.memory.sync_turn("garden", "user", f"turn {i}: Anna talks about plot {i * 7}")
    room, row = root_page_room(app, "narratives"), 0
    for i in range(NARRATIVES):
        if room is None or room < 2 * row:  # the next one might not fit
            break
        app.memory.write(gesture=f"memory {i}: Anna's garden in Porto", tags=["family"])
        left = root_page_room(app, "narratives")
        row, room = max(row, (room - left) if left is not None else row), left
    assert room is not None and i >= 10, "narratives no longer fit their first page"
    app.close()
    return home / "memory.db"


def rows_in(path: Path, table: str) -> int:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def test_a_small_memory_cut_in_half_is_read_page_by_page(small: Path, isolated_home: Path) -> None:
    """SQLite cannot read its list of tables (the pages written last are gone), so the repair
    reads the pages that are left: the memories on them come back, the lost turns are named."""
    kept = small.stat().st_size // damage.page_size(small) // 2  # what `truncated` leaves
    assert max(damage.pages_of(small, "narratives")) <= kept  # the memories: all on the front
    assert max(damage.pages_of(small, "sqlite_schema")) > kept  # the list of tables: cut
    assert max(damage.pages_of(small, "turns")) > kept  # and turns
    narratives = rows_in(small, "narratives")
    path = damaged(small, isolated_home, "truncated")
    code, out, err = run("doctor", "--repair", "--json")
    assert code == 0, (out, err)
    [repaired] = json.loads(out)["repaired"]
    assert repaired["rows"]["narratives"] == narratives and "missing" in repaired["lost"]["turns"]
    stats = json.loads(run("stats", "--json")[1])
    assert stats["narratives"] == narratives and stats["sessions"] == 1
    hits = json.loads(run("search", "Porto garden", "--json", "--mode", "lex")[1])["hits"]
    assert len(hits) > 0 and path.exists()


def test_a_memory_cut_to_its_first_page_says_why_nothing_came_back(
    small: Path, isolated_home: Path
) -> None:
    path = damaged(small, isolated_home, "empty")
    path.write_bytes(small.read_bytes()[: damage.page_size(small)])
    before = digest(path)
    code, out, _ = run("doctor", "--repair", "--json")
    [repaired] = json.loads(out)["repaired"]
    assert code == 1 and repaired["action"] == "failed" and "\n" not in repaired["error"]
    assert "it holds 1 of the" in repaired["error"] and "not one row" in repaired["error"]
    assert "`tideline import` your last `tideline export`" in repaired["error"]  # what is left
    assert digest(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "memory.db",
        "memory.db.damage.json",
    ]  # no half-built `.memory.db.repaired`, no empty -wal / -shm beside it (#21)


@pytest.mark.parametrize("part", ["whole page", "below the header"])
def test_a_memory_whose_first_page_is_damaged_comes_back_whole(
    part: str, small: Path, isolated_home: Path
) -> None:
    """Page 1 is the root of the list of tables, whose entries sit on leaves elsewhere: the
    repair finds them there (and the page size from the other pages when the header is gone)."""
    path = damaged(small, isolated_home, "empty")
    shutil.copyfile(small, path)
    size = damage.page_size(small)
    start = 0 if part == "whole page" else 100
    with path.open("r+b") as f:
        f.seek(start)
        f.write(random.Random(21).randbytes(size - start))
    code, out, err = run("doctor", "--repair", "--json")
    assert code == 0, (out, err)
    [repaired] = json.loads(out)["repaired"]
    assert repaired["action"] == "recovered" and repaired["lost"] == {}, repaired
    narratives = rows_in(small, "narratives")
    assert repaired["rows"]["turns"] == TURNS and repaired["rows"]["narratives"] == narratives
    assert any("found again on" in n for n in repaired["notes"])
    stats = json.loads(run("stats", "--json")[1])
    assert (stats["turns"], stats["narratives"]) == (TURNS, narratives)
    assert not [p.name for p in path.parent.iterdir() if p.name.startswith(".")]


def test_repair_keeps_the_profiles_tables(small: Path, isolated_home: Path) -> None:
    """Facts live in memory.db too: the new file gets every table the agent database holds."""
    home = isolated_home / "with-fact"
    home.mkdir(parents=True)
    shutil.copyfile(small, home / "memory.db")
    app = Tideline(Settings.load(env={}, overrides={"home": str(home), "embedder": "none"}))
    add_fact(app.profile, "lives in Porto")
    app.close()
    path = damaged(home / "memory.db", isolated_home, "zeroed-header")
    code, out, err = run("doctor", "--repair", "--json")
    assert code == 0, (out, err)
    assert json.loads(out)["repaired"][0]["rows"]["facts"] == 1
    app = Tideline(Settings.load(env={}, overrides={"home": str(path.parent), "embedder": "none"}))
    try:
        assert [f.value for f in app.profile.facts()] == ["lives in Porto"]
    finally:
        app.close()


def test_a_missing_database_is_still_created_fresh(isolated_home: Path) -> None:
    code, out, _ = run("stats", "--json")
    assert code == 0 and json.loads(out)["turns"] == 0
    assert sorted(p.name for p in isolated_home.iterdir() if p.name.startswith(".")) == []


def test_sqlite_that_is_not_tidelines_is_refused(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    with Database(isolated_home / "memory.db") as db:
        db.execute("CREATE TABLE recipes(name TEXT)")
    code, _, err = run("stats")
    assert code == 3 and "not Tideline's" in err and err.count("\n") == 1


def test_damage_in_the_middle_of_the_log_is_found_by_doctor(
    template: Path, isolated_home: Path
) -> None:
    isolated_home.mkdir(parents=True)
    path = isolated_home / "memory.db"
    shutil.copyfile(template, path)
    damage.leave_wal(path, rows=40)
    size = damage.page_size(path)
    with Path(f"{path}-wal").open("r+b") as f:  # garble the page of frame 2; later commits follow
        f.seek(32 + (24 + size) + 24 + 100)
        f.write(b"\xff" * 64)
    code, out, _ = run("doctor", "--json")
    assert code == 1
    assert any("frame 2 fails its checksum" in p for p in json.loads(out)["problems"])


def test_a_damaged_log_frame_is_found_before_sqlite_drops_the_writes_after_it(
    template: Path, isolated_home: Path
) -> None:
    """One damaged frame early in a log that holds 60 acknowledged writes (issue 31): SQLite
    replays the log up to it and the next checkpoint drops the rest, so `stats` and `search`
    exited 0 and doctor, run after them, found nothing. Every open checks the frames first: the
    first command refuses, says how many frames and commits would go and what to do, and the
    log is left as it was for doctor and --repair."""
    isolated_home.mkdir(parents=True)
    path = isolated_home / "memory.db"
    shutil.copyfile(template, path)
    damage.leave_wal(path, rows=60)
    note_checked(path)  # found sound lately (a killed server's last check): none due at open
    wal = Path(f"{path}-wal")
    size = damage.page_size(path)
    with wal.open("r+b") as f:  # random bytes over the page of frame 3
        f.seek(32 + 2 * (24 + size) + 24)
        f.write(random.Random(31).randbytes(size))
    before = digest(wal)
    for args in (("stats",), ("search", "Anna garden", "--turns")):
        assert_one_line_refusal(path, *args)
        err = run(*args)[2]
        assert "frame 3 fails its checksum; the 60 frames after it hold 60 committed" in err, err
    assert digest(wal) == before  # nothing replayed or checkpointed it
    code, out, _ = run("doctor", "--json")
    assert code == 1 and any("60 committed transactions" in p for p in json.loads(out)["problems"])


def test_mcp_tools_return_one_line_errors_and_the_server_stays_up(
    template: Path, isolated_home: Path, settings: Settings
) -> None:
    path = damaged(template, isolated_home, "truncated")
    app = Tideline(settings)
    server = build_server(app)

    async def scenario() -> None:
        async with Client(server) as client:
            for _ in range(2):  # the second call proves the server is still answering
                msg = error_text(await client.call_tool("memory_stats", {}))
                assert str(path) in msg and "tideline doctor --repair" in msg
            msg = error_text(await client.call_tool("memory_search", {"query": "Anna"}))
            assert "is truncated" in msg

    try:
        anyio.run(scenario)
    finally:
        app.close()


def test_library_indexes_are_checked_and_a_damaged_one_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "lib"
    root.mkdir()
    with library_from(DEFAULTS, root) as library:
        library.init_collection("garden", "Notes about the garden")
        for i in range(40):
            (root / "garden" / f"note{i}.md").write_text(f"# Bed {i}\n\n" + "Tomatoes. " * 200)
        library.index()
    index = root / "garden" / ".memo" / "index.db"
    monkeypatch.setenv("MEMO_ROOT", str(root))
    code, out, _ = run("doctor", "--json")
    checked = json.loads(out)["files"]
    assert code == 0
    assert checked == [{"path": str(index), "role": "library index", "problems": [], "ok": True}]

    damage.scribble(index, damage.middle_of(index, "chunks"))
    code, out, _ = run("doctor", "--json")
    report = json.loads(out)
    [bad] = [f for f in report["files"] if not f["ok"]]
    assert code == 1 and bad == {**bad, "path": str(index), "role": "library index"}
    assert any(p.startswith(str(index)) and "quick_check" in p for p in report["problems"])

    code, out, _ = run("doctor", "--repair", "--json")
    [repaired] = [r for r in json.loads(out)["repaired"] if r["action"] != "healthy"]
    assert code == 0 and repaired["action"] == "set aside" and Path(repaired["kept"]).exists()
    # the next memo command rebuilds it from the notes
    with library_from(DEFAULTS, root) as library:
        library.index()
        assert library.search("tomatoes").hits
