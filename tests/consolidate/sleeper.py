"""A child process that runs one sleep and blocks at a step boundary until it is killed.

    python -m tests.consolidate.sleeper HOME LLM_URL STEP MARKER

The clock is fixed (the parent's scenario time) so the child's changes match an in-process run.
"""

from __future__ import annotations

import datetime as dt
import sys
import threading
from pathlib import Path

from tests.consolidate.conftest import Agent
from tests.profile.conftest import Clock
from tideline.consolidate import StepEvent


def main(home: str, url: str, stop: str, marker: str, now: str) -> None:
    agent = Agent(Path(home), url, Clock(dt.datetime.fromisoformat(now)))

    def block(event: StepEvent) -> None:
        if event.name == stop and event.phase == "start":
            Path(marker).write_text(event.name)
            threading.Event().wait()  # until SIGKILL

    agent.sleep().run(progress=block)


if __name__ == "__main__":
    main(*sys.argv[1:6])
