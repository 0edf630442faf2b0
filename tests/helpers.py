"""Small helpers for tests: polling with a deadline, the shared data folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")

#: ../shared/data beside the checkout; TIDELINE_SHARED_DATA names it for a checkout elsewhere (a
#: git worktree under another folder), so that the suite it runs is the one CI runs.
SHARED_DATA = Path(
    os.environ.get("TIDELINE_SHARED_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


def wait_until(check: Callable[[], T], timeout: float = 5.0, interval: float = 0.02) -> T:
    """Poll `check` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s: {check}")
        time.sleep(interval)


def kill_building(script: str, database: Path, folder: Path) -> None:
    """Run `script` (python source; argv[1] is the database) and SIGKILL it as soon as it has
    begun writing an unpublished build in `folder` (a `.….tmp` entry)."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(database)])
    try:
        wait_until(lambda: any(p.name.endswith(".tmp") for p in folder.glob(".*")), timeout=120)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()


def killed_at_marker(args: list[str], cwd: Path, marker: Path, timeout: float) -> int:
    """Run `args` (a Python child that creates `marker` at the point to die at), SIGKILL it
    there and return its exit status; what the child printed on stderr is in the assertion
    when it ends or times out before the marker."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(cwd)}
    log = marker.with_suffix(".log")
    with log.open("wb") as err:
        child = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_until(lambda: marker.exists() or child.poll() is not None, timeout=timeout)
            assert marker.exists(), log.read_text()
            os.kill(child.pid, signal.SIGKILL)
            return child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
