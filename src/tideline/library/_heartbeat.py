"""The watcher's heartbeat: `<root>/.memo-watch`, touched about once a second while a watcher
runs, so a search in any process knows it may trust the index instead of stat-ing every note.

The file holds the watcher's pid; its mtime is the beat. A beat older than `TTL` (a killed or
hung watcher) is no beat: searches stat the notes again. The name starts with a dot, so neither
the scanner nor the watcher's own event filter ever treats it as a note.
"""

from __future__ import annotations

import os
from pathlib import Path

from tideline.clock import epoch_seconds

NAME = ".memo-watch"
EVERY = 1.0  # seconds between beats
TTL = 5.0  # a beat older than this means no watcher


def beat_path(root: Path) -> Path:
    return root / NAME


def beat(root: Path, *, create: bool = False) -> None:
    """Say "still watching": write the pid once (`create`), then only touch the file."""
    path = beat_path(root)
    if create or not path.exists():
        tmp = path.with_name(NAME + ".tmp")
        tmp.write_text(f"{os.getpid()}\n", encoding="utf-8")
        os.replace(tmp, path)
    else:
        os.utime(path)


def stop(root: Path) -> None:
    """The watcher stopped: remove its beat (only its own: a newer watcher may have taken over)."""
    path = beat_path(root)
    try:
        if path.read_text(encoding="utf-8").strip() == str(os.getpid()):
            path.unlink()
    except OSError:
        pass


def alive(root: Path) -> bool:
    """Whether a watcher beat within `TTL`: one stat, a few microseconds."""
    try:
        return epoch_seconds() - os.stat(beat_path(root)).st_mtime < TTL
    except OSError:
        return False
