"""Debian's Chromium driven by Playwright (no browser download), for the tests that need a real
browser: skipped, with the reason, where it is missing (`.ci/run` installs it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium here: install Debian's package (apt-get install chromium), as .ci/run does",
)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright's `Browser`), closed at the end."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        yield browser
        browser.close()
