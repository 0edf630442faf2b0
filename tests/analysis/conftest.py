"""A real agent database (temporary home, the bundled e5 embedder) for the wired script layer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import E5Embedder
from tideline.memory import Memory
from tideline.store import Database


@pytest.fixture
def app(settings: Settings, e5: E5Embedder) -> Iterator[Tideline]:
    app = Tideline(settings, embedder=e5)
    yield app
    app.close()


@pytest.fixture
def memory(app: Tideline) -> Memory:
    return app.memory


@pytest.fixture
def db(app: Tideline) -> Database:
    return app.db
