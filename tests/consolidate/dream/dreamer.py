"""A child process that runs one dream and blocks at a layer's start until it is killed.

python -m tests.consolidate.dream.dreamer HOME LLM_URL LAYER MARKER
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from tests.consolidate.dream.conftest import DAY, Day
from tideline.consolidate import StepEvent


def main(home: str, url: str, stop: str, marker: str) -> None:
    day = Day(Path(home), url)

    def block(event: StepEvent) -> None:
        if event.name == stop and event.phase == "start":
            Path(marker).write_text(event.name)
            threading.Event().wait()  # until SIGKILL

    day.dream().run(date=DAY, progress=block)


if __name__ == "__main__":
    main(*sys.argv[1:5])
