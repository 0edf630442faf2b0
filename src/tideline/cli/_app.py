"""Building the core app for a CLI command: settings from env + config, then `Tideline`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tideline.app import Tideline
from tideline.cli._output import errors_to_exit
from tideline.config import Settings


@contextmanager
def open_app() -> Iterator[Tideline]:
    """A `Tideline` for one command; errors become one line on stderr and an exit code."""
    with errors_to_exit():
        app = Tideline(Settings.load())
        try:
            yield app
        finally:
            app.close()
