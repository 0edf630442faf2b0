"""Building the core app for a CLI command: settings from env + config, then `Tideline`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tideline.app import Tideline
from tideline.cli._output import errors_to_exit
from tideline.config import Settings


@contextmanager
def open_app(**overrides: Any) -> Iterator[Tideline]:
    """A `Tideline` for one command; `overrides` are command-line settings (None: not given).
    Errors become one line on stderr and an exit code."""
    with errors_to_exit():
        app = Tideline(Settings.load(overrides=overrides))
        try:
            yield app
        finally:
            app.close()
