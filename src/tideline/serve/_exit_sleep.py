"""The sleep that follows an agent session: when a stdio MCP client disconnects (setting
`sleep_on_exit`) or Hermes ends a session, start a sleep off the agent's thread.

The sleep runs as its own process, `tideline sleep --timeout <sleep_on_exit_timeout>`, in a new
session, and the caller goes on at once. It cannot run inside the caller: MCP clients kill the
server's process group a moment after closing its stdin (the MCP SDK's stdio client: 2 s, then
SIGTERM and SIGKILL), and Hermes exits when its session does — both far shorter than a sleep that
waits on an LLM. The detached run is bounded by its timeout and, like any sleep, is all or
nothing; one already running makes it exit with `SleepBusy`. Its report is appended to
`<home>/sleep.log`; the caller logs where it went.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections.abc import Mapping

from tideline.clock import now_text, system_clock
from tideline.config import Settings

log = logging.getLogger("tideline.serve")


def start_exit_sleep(settings: Settings, why: str, env: Mapping[str, str] | None = None) -> int:
    """Start the detached sleep (`why`: what ended, for the log); its pid. The child reads
    `env` (None: this process's environment) and so the same settings and config file."""
    log_path = settings.home / "sleep.log"
    timeout = f"{settings.sleep_on_exit_timeout:g}"
    command = [sys.executable, "-m", "tideline", "sleep", "--timeout", timeout]
    settings.home.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as out:
        out.write(f"--- {now_text(system_clock)} {why}: sleep on exit (timeout {timeout} s)\n")
        out.flush()
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=None if env is None else dict(env),
            start_new_session=True,  # out of the caller's process group: it outlives the caller
        )
    # reaped when it ends, so a long-running caller (a Hermes gateway) keeps no zombie
    threading.Thread(target=child.wait, name="tideline-sleep-reaper", daemon=True).start()
    log.info(
        "sleep on exit: started `tideline sleep` as pid %d (timeout %s s); report in %s",
        child.pid,
        timeout,
        log_path,
    )
    return child.pid
