"""The sleep-on-exit trigger over a real stdio subprocess: the client ends its session, the
server starts `tideline sleep` on its way out, and the profile holds the conversation's facts."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.consolidate.story import REPLY, SESSION, USER, script
from tests.helpers import wait_until
from tests.llm_server import LLMServer
from tests.mcp.conftest import payload, serve_command, server_env
from tideline.app import Tideline
from tideline.config import Settings


@pytest.fixture
def llm() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_session_end_starts_a_sleep_that_forms_the_profile(
    tmp_path: Path, llm: LLMServer
) -> None:
    env = server_env(
        tmp_path,
        TIDELINE_SLEEP_ON_EXIT="1",
        TIDELINE_SLEEP_ON_EXIT_TIMEOUT="120",
        TIDELINE_LLM_BASE_URL=llm.url,
        TIDELINE_LLM_MODEL="scripted-model",
        TIDELINE_LLM_BACKOFF="0.001",  # a failing test's sleep gives up at once
        TIDELINE_EMBEDDER="none",
    )
    command, *args = serve_command("--transport", "stdio")
    params = StdioServerParameters(command=command, args=args, env=env)
    errors = tmp_path / "stderr.log"

    async def session() -> int:
        with errors.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
                turn = {"session": SESSION, "role": "user", "text": USER}
                first = payload(await c.call_tool("sync_turn", turn))["id"]
                reply = {"session": SESSION, "role": "assistant", "text": REPLY}
                await c.call_tool("sync_turn", reply)
                script(llm, first)  # the sleep asks once the session has ended
                return int(first)

    turn = anyio.run(session)  # returns once the server process has exited
    logged = " ".join(errors.read_text().split())  # the log handler wraps long lines
    started = re.search(r"sleep on exit: started .* as pid (\d+)", logged)
    assert started, logged
    pid = int(started.group(1))
    wait_until(lambda: gone(pid), timeout=120, interval=0.1)

    home = Path(env["TIDELINE_HOME"])
    log = (home / "sleep.log").read_text()
    assert "the MCP client disconnected: sleep on exit (timeout 120 s)" in log
    assert "sleep done in " in log and "applied: " in log and "Traceback" not in log
    app = Tideline(Settings.load(overrides={"home": str(home), "embedder": "none"}))
    try:
        facts = app.profile.facts()
        assert sorted(f.value for f in facts) == ["lives in Osaka", "works as a nurse"]
        assert all([e.turn_id for e in f.evidence] == [turn] for f in facts)
        assert [r.status for r in app.profile.runs()] == ["done"]
    finally:
        app.close()
    assert "Traceback" not in errors.read_text()
