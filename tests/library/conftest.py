"""Fixtures for the library tests: real folders of markdown, real SQLite, the real e5 embedder."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

SHARED_TLDR = Path(__file__).resolve().parents[3] / "shared" / "data" / "tldr"


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_collection(root: Path, rel: str, description: str, notes: dict[str, str]) -> Path:
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    write(root, f"{rel}/_meta.yaml", f"name: {rel}\ndescription: {description!r}\ntags: [t]\n")
    for name, text in notes.items():
        write(root, f"{rel}/{name}", text)
    return folder


def poll(check: Callable[[], object], timeout: float = 5.0, every: float = 0.02) -> object:
    """Call `check` until it returns something truthy or the deadline passes (no blind sleeps)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            return value
        time.sleep(every)


@pytest.fixture
def lib_root(tmp_path: Path) -> Path:
    root = tmp_path / "lib"
    root.mkdir()
    return root
