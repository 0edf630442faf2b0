from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import E5Embedder
from tideline.memory import Memory
from tideline.store import Database


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
    ):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def settings(isolated_home: Path) -> Settings:
    return Settings.load()


@pytest.fixture(scope="session")
def e5() -> E5Embedder:
    """The real bundled embedder (one model per test process)."""
    return E5Embedder()


@pytest.fixture
def app(settings: Settings, e5: E5Embedder) -> Iterator[Tideline]:
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
