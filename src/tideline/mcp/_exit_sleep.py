"""The sleep-on-exit trigger: when a stdio client disconnects (the agent session ended), start a
sleep (setting `sleep_on_exit`, off by default).

The sleep runs as its own process, `tideline sleep --timeout <sleep_on_exit_timeout>`, in a new
session, and this server exits at once. It cannot run inside the server: clients kill the
server's process group a moment after closing its stdin (the MCP SDK's stdio client: 2 s, then
SIGTERM and SIGKILL), far shorter than a sleep that waits on an LLM. The detached run is bounded
by its timeout and, like any sleep, is all or nothing; one already running makes it exit with
`SleepBusy`. Its report is appended to `<home>/sleep.log`; the server logs where it went.
"""

from __future__ import annotations

import logging
import subprocess
import sys

from tideline.clock import now_text
from tideline.config import Settings

log = logging.getLogger("tideline.mcp")


def start_exit_sleep(settings: Settings) -> int:
    """Start the detached sleep; its pid. The child reads the same environment and config."""
    log_path = settings.home / "sleep.log"
    timeout = f"{settings.sleep_on_exit_timeout:g}"
    command = [sys.executable, "-m", "tideline", "sleep", "--timeout", timeout]
    settings.home.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as out:
        now = now_text()
        out.write(f"--- {now} the MCP client disconnected: sleep on exit (timeout {timeout} s)\n")
        out.flush()
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # out of the client's process group: it outlives the server
        )
    log.info(
        "sleep on exit: started `tideline sleep` as pid %d (timeout %s s); report in %s",
        child.pid,
        timeout,
        log_path,
    )
    return child.pid
