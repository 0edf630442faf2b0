from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import CachedEmbedder, E5Embedder, Embedder
from tideline.memory import Memory
from tideline.store import Database, Namespace, Storage, open_database, open_postgres


def pytest_configure(config: pytest.Config) -> None:
    """Temporary files in memory (/dev/shm, when it has room and TMPDIR does not say otherwise),
    for this process and the programs it starts: every test's SQLite files commit there, where a
    sync costs nothing (the profile and memory suites took 21-26 s on a busy disk, 15 s here)."""
    shm = _in_memory()
    if shm is not None and not os.environ.get("TMPDIR"):
        os.environ["TMPDIR"] = str(shm)
        tempfile.tempdir = None  # asked again: gettempdir() reads TMPDIR
    # The terminal's size is a test's own to set. A readline import in pytest's process puts
    # COLUMNS=80 and LINES=24 into the environment its xdist workers (`make test`) start with,
    # and the CLI's console, made once per process (at collection, here), would cut every table
    # to 80 columns there and only there.
    for var in ("COLUMNS", "LINES"):
        os.environ.pop(var, None)


def pytest_report_header(config: pytest.Config) -> str:
    return f"sqlite {apsw.sqlite_lib_version()}, apsw {apsw.apsw_version()}"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own home, cache and config; nothing touches ~."""
    home = tmp_path / "home"
    monkeypatch.setenv("TIDELINE_HOME", str(home))
    monkeypatch.setenv("TIDELINE_EMBED_CACHE", str(tmp_path / "embed-cache.db"))
    for var in (
        "TIDELINE_EMBEDDER",
        "TIDELINE_CONFIG",
        "AGENT_NAME",
        "MEMO_ROOT",
        "TIDELINE_EMBED_URL",
        "TIDELINE_DATABASE_URL",
        "TIDELINE_DATABASE_USER",
    ):
        monkeypatch.delenv(var, raising=False)
    return home


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked `engines` run once on SQLite and once on PostgreSQL (same bodies)."""
    named = any(
        "engine" in str(m.args[0]) for m in metafunc.definition.iter_markers("parametrize")
    )  # a test that names its engine itself keeps it
    if (
        metafunc.definition.get_closest_marker("engines")
        and "engine" in metafunc.fixturenames
        and not named
    ):
        metafunc.parametrize("engine", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    """The agent database's engine: SQLite unless the test is marked `engines`."""
    return str(getattr(request, "param", "sqlite"))


def _in_memory(room: int = 4 << 30) -> Path | None:
    """/dev/shm when it is there, writable and has `room` bytes free (a container's default
    64 MB does not), else None (the system's temporary folder)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    free = os.statvfs(shm)
    return shm if free.f_bavail * free.f_frsize >= room else None


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A real PostgreSQL 16 with pgvector from the `pgserver` wheel, for the whole session. Its
    folder is not under pytest's (mode 0700): the server runs as its own user, which must reach it.
    It is in memory (/dev/shm) where there is one: the suite leaves a few GB of small files there,
    whose removal from a disk took 50 s of the suite's end at load."""
    try:
        with warnings.catch_warnings():  # no XDG_RUNTIME_DIR here: it falls back to /tmp
            warnings.simplefilter("ignore")
            import pgserver
            import psycopg

            folder = Path(tempfile.mkdtemp(prefix="tideline-pg-", dir=_in_memory()))
            server = pgserver.get_server(folder / "data", "delete")
    except Exception as exc:  # any failure to start: skip, saying why
        pytest.skip(f"PostgreSQL from the pgserver wheel could not start: {exc}")
    # A throwaway server: no flush to disk (its shutdown checkpoint took a minute on a busy disk)
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for name in ("fsync", "synchronous_commit", "full_page_writes"):
            conn.execute(f"ALTER SYSTEM SET {name} = off")
        conn.execute("SELECT pg_reload_conf()")
    yield server.get_uri()
    # nothing to keep: stop at once (a clean shutdown waits ~20 s for its checkpoint here)
    pgserver.pg_ctl(
        ["-m", "immediate", "-w", "stop"], pgdata=server.pgdata, user=server.system_user
    )
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


_namespaces = itertools.count(1)


@pytest.fixture
def new_storage(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[], Storage]]:
    """Makes empty databases of the test's engine: SQLite files, or PostgreSQL namespaces."""
    opened: list[Storage] = []

    def make() -> Storage:
        n = next(_namespaces)
        if engine == "postgresql":
            db: Storage = open_postgres(request.getfixturevalue("pg_url"), Namespace(f"test{n}"))
        else:
            db = open_database(tmp_path / f"s{n}.db")
        opened.append(db)
        return db

    yield make
    for db in opened:
        db.close()


@pytest.fixture
def storage(new_storage: Callable[[], Storage]) -> Storage:
    """An empty database of the test's engine."""
    return new_storage()


@pytest.fixture
def engine_env(
    isolated_home: Path,
    engine: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """On PostgreSQL, the server and a namespace of the test's own in the environment, so every
    `Settings.load()` of the test (its apps, the CLI it runs) puts the agent database there."""
    if engine == "postgresql":
        monkeypatch.setenv("TIDELINE_DATABASE_URL", request.getfixturevalue("pg_url"))
        monkeypatch.setenv("TIDELINE_DATABASE_USER", f"test{next(_namespaces)}")  # one per test
    return engine


@pytest.fixture
def settings(engine_env: str) -> Settings:
    return Settings.load()


@pytest.fixture(scope="session")
def e5_model() -> E5Embedder:
    """The real bundled embedder itself (one model per test process), for tests of the model."""
    return E5Embedder()


@pytest.fixture(scope="session")
def e5(e5_model: E5Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    """The bundled embedder as the app runs it, behind the persistent cache, one cache for the
    session: the same seeded memories, embedded for dozens of tests, are embedded once and read
    back by the others (the vectors are the model's, byte for byte)."""
    cached = CachedEmbedder(e5_model, tmp_path_factory.mktemp("e5") / "embed-cache.db")
    yield cached
    cached.close()


@pytest.fixture
def app(settings: Settings, e5: Embedder) -> Iterator[Tideline]:
    """A real agent (temporary home, the bundled e5 embedder)."""
    app = Tideline(settings, embedder=e5)
    yield app
    app.close()


@pytest.fixture
def memory(app: Tideline) -> Memory:
    return app.memory


@pytest.fixture
def db(app: Tideline) -> Database:
    return app.db
