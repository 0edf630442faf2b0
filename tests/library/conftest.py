"""Fixtures for the library tests: real folders of markdown, real SQLite, the real e5 embedder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def lib_root(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    root.mkdir()
    return root
