"""Hermes Agent's real runtime (hermes-agent 0.19, the dev extra) around the provider: a
`$HERMES_HOME` per test, its config.yaml naming Tideline, and Hermes's own `MemoryManager`.
Every test module here skips, saying why (`NO_HERMES`), only where hermes-agent cannot be
imported."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from tideline.app import Tideline
from tideline.clock import Clock, system_clock
from tideline.config import Settings

if TYPE_CHECKING:
    from agent.memory_manager import MemoryManager

    from tideline.hermes import TidelineProvider

#: What each test module here does first: skip, saying why, without hermes-agent.
NO_HERMES = "hermes-agent is not installed (make setup installs it with the dev extra)"

#: Tideline's settings under Hermes in these tests: no embedding model (lexical search is
#: enough to recall a sentence, and a test pays no model load), short lock waits.
FAST = {"embedder": "none", "busy_timeout_ms": 100}


def write_config(hermes_home: Path, **tideline: Any) -> None:
    """config.yaml naming Tideline as the memory provider, with these Tideline settings."""
    config = {"memory": {"provider": "tideline", "tideline": {**FAST, **tideline}}}
    (hermes_home / "config.yaml").write_text(yaml.safe_dump(config))


def rows(home: Path) -> list[dict[str, object]]:
    """Every kept turn with its session key, read from the database itself."""
    app = Tideline(Settings.load(overrides={"home": str(home), "embedder": "none"}))
    try:
        return app.db.rows(
            "SELECT s.key, t.role, t.speaker, t.text, t.ts FROM turns t JOIN sessions s"
            " ON s.id = t.session_id ORDER BY t.id"
        )
    finally:
        app.close()


def turns(home: Path) -> list[tuple[str, str, str]]:
    """(session, role, text) of every kept turn."""
    return [(str(r["key"]), str(r["role"]), str(r["text"])) for r in rows(home)]


@pytest.fixture
def hermes_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "hermes"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    write_config(home)
    return home


Manager = Callable[..., tuple["MemoryManager", "TidelineProvider"]]


@pytest.fixture
def manager(hermes_home: Path) -> Iterator[Manager]:
    """Hermes's `MemoryManager` driving a new provider, initialised as Hermes's agent does."""
    from agent.memory_manager import MemoryManager

    from tideline.hermes import TidelineProvider

    made: list[MemoryManager] = []

    def make(
        session: str = "s1", drain_seconds: float = 5.0, clock: Clock = system_clock, **init: Any
    ) -> tuple[MemoryManager, TidelineProvider]:
        provider = TidelineProvider(drain_seconds=drain_seconds, clock=clock)
        mm = MemoryManager()
        mm.add_provider(provider)
        kwargs = {"platform": "cli", "agent_context": "primary", **init}
        mm.initialize_all(session_id=session, hermes_home=str(hermes_home), **kwargs)
        made.append(mm)
        return mm, provider

    yield make
    for mm in made:
        mm.shutdown_all()
