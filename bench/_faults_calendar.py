"""The calendar's ends on every surface (issue 31): one stored turn dated 9999-12-31 (or
0001-01-01), stored before times sent in were bounded, made every later "tomorrow", "next week",
"next year" or "this weekend" fail, and `today=0001-01-01` every "last May" or "3 days ago".

Each combination of the newest stored turn's time, `today` (none, inside 1900–2999, or outside
it) and a time word (tests/fuzz/test_calendar_edges.py's 47, in three languages) is searched
through the core (`Memory.search`), REST (`GET /api/search`, the app in process behind its
guard), MCP (`memory_search`, the SDK's client in process) and the CLI (`tideline search`, a
process of its own, a sample). A failure is anything but an answer or a one-line refusal of a
`today` outside the accepted years: an exception that is not Tideline's, a 500, a traceback.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import anyio
from _faults_report import Row
from mcp import Client

from tests.fuzz.test_calendar_edges import PHRASES
from tests.kills import BIN, cli_env, run
from tests.web.conftest import client_for
from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import TidelineError
from tideline.mcp import build_server

STORED = (
    "9999-12-31T12:00:00Z",
    "0001-01-01T00:00:00Z",
    "2999-12-31T23:59:59Z",
    "2026-05-01T10:00:00Z",
)
TODAY = (None, "1900-01-01", "2999-12-31", "2026-05-03", "0001-01-01", "9999-12-31", "3000-01-01")
OUTSIDE = {"0001-01-01", "9999-12-31", "3000-01-01"}


def _home(base: Path) -> tuple[dict[str, str], Tideline]:
    env = cli_env(base)
    app = Tideline(Settings.load(env=env))
    app.memory.sync_turn("s1", "user", "we plan the picnic by the river", timestamp="2026-05-01")
    return env, app


def _date(app: Tideline, stored: str) -> None:
    """The newest turn dated `stored`, as a memory from before the bound holds it."""
    app.memory.db.execute("UPDATE turns SET ts = ? WHERE id = 1", (stored,))


def calendar_edges(base: Path, sample: int) -> list[Row]:
    env, app = _home(base)
    combos = list(itertools.product(STORED, TODAY, PHRASES))
    core_bad: list[str] = []
    web_bad: list[str] = []
    mcp_bad: list[str] = []
    cli_bad: list[str] = []
    rng = random.Random(31)
    picked = rng.sample(combos, min(sample, len(combos)))
    try:
        for stored, today, phrase in combos:
            _date(app, stored)
            try:
                app.memory.search(f"picnic {phrase}", today=today)
            except TidelineError as exc:
                if today not in OUTSIDE or "\n" in str(exc):
                    core_bad.append(f"{stored} {today} {phrase!r}: {exc}")
            except Exception as exc:  # the failure this section counts
                core_bad.append(f"{stored} {today} {phrase!r}: {type(exc).__name__}: {exc}")
        with client_for(app) as client:  # (REST takes no `today`)
            for stored, _today, phrase in picked:
                _date(app, stored)
                params = {"query": f"picnic {phrase}"}
                answer = client.get("/api/search", params=params)
                if answer.status_code != 200:
                    web_bad.append(f"{stored} {phrase!r}: {answer.status_code}")

        async def over_mcp() -> None:
            async with Client(build_server(app)) as client:
                for stored, today, phrase in picked:
                    _date(app, stored)
                    args = {"query": f"picnic {phrase}"} | ({"today": today} if today else {})
                    result = await client.call_tool("memory_search", args)
                    said = result.content[0].text if result.content else ""
                    refused = result.is_error and today in OUTSIDE and "is outside" in said
                    if result.is_error and not refused:
                        mcp_bad.append(f"{stored} {today} {phrase!r}: {said[:80]}")

        anyio.run(over_mcp)
        for stored, today, phrase in picked[: max(3, sample // 20)]:
            _date(app, stored)
            args = [str(BIN / "tideline"), "search", f"picnic {phrase}", "--json"]
            done = run(args + (["--today", today] if today else []), env)
            lines = done.stderr.strip().splitlines()
            refused = done.returncode == 2 and today in OUTSIDE and len(lines) == 1
            if (done.returncode != 0 and not refused) or "Traceback" in done.stderr:
                cli_bad.append(f"{stored} {today} {phrase!r}: exit {done.returncode}")
    finally:
        app.close()

    def row(surface: str, trials: int, bad: list[str]) -> Row:
        figure = "; ".join(bad[:3]) or (
            f"{trials:,} searches (newest turn {len(STORED)} ways × `today` × time words): "
            "every one answered, or refused in one line for a `today` outside 1900–2999"
        )
        return Row(f"time words at the calendar's ends: {surface}", trials, len(bad), figure)

    return [
        row("core `Memory.search`", len(combos), core_bad),
        row("REST `/api/search`", len(picked), web_bad),
        row("MCP `memory_search`", len(picked), mcp_bad),
        row("CLI `tideline search`", max(3, sample // 20), cli_bad),
    ]
