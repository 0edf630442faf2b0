""" "As of" through every driver: `tideline profile --as-of`, `memory_profile(as_of=…)` over the
real MCP client, `GET /api/profile?as_of=`, and the panel's profile page and fact timeline (both
clocks, and a link to the profile of each change's day). A bad date is one line everywhere."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from tests.mcp.conftest import error_text, in_memory, payload
from tests.profile.test_as_of import spring
from tests.web.conftest import client_for
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings

pytestmark = pytest.mark.engines


@pytest.fixture
def seeded(engine_env: str) -> Iterator[tuple[Tideline, dict[str, int]]]:
    """The spring of 2023 in the test's home (the CLI opens the same one)."""
    app = Tideline(Settings.load(overrides={"embedder": "none"}))
    ids = spring(app.profile, app.memory)
    yield app, ids
    app.close()


def test_the_cli_shows_the_profile_as_of_a_date(seeded: tuple[Tideline, dict[str, int]]) -> None:
    runner = CliRunner()
    done = runner.invoke(cli, ["profile", "--as-of", "2023-05-21", "--json"])
    assert done.exit_code == 0, done.stderr
    view = json.loads(done.stdout)
    assert view["as_of"] == "2023-05-21T23:59:59Z"
    assert [(f["value"], f["status"]) for f in view["facts"]] == [("Tokyo", "confirmed")]
    text = runner.invoke(cli, ["profile", "--as-of", "2023-06-30"])
    assert text.exit_code == 0, text.stderr
    assert "as of 2023-06-30T23:59:59Z (the user's time): 1 fact(s) believed then" in text.stdout
    assert "Osaka" in text.stdout and "Tokyo" not in text.stdout
    assert "event 2023-06-24 → 2023-06-25: camping weekend" in text.stdout
    assert "person: Aiko (girlfriend) [married]" in text.stdout
    bad = runner.invoke(cli, ["profile", "--as-of", "last tuesday"])
    assert bad.exit_code != 0 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "as_of='last tuesday'" in bad.stderr


def test_the_cli_timeline_gives_both_clocks(seeded: tuple[Tideline, dict[str, int]]) -> None:
    _, ids = seeded
    done = CliRunner().invoke(cli, ["fact", "show", str(ids["tokyo"])])
    assert done.exit_code == 0, done.stderr
    assert "true from 2023-05-08 to 2023-06-09, expires 2024-05-19 (the user's time)" in done.stdout
    assert "learnt " in done.stdout and "(Tideline's time)" in done.stdout
    assert "2023-05-20T09:00 · " in done.stdout  # confirmed then; recorded when it was applied


def test_mcp_memory_profile_answers_as_of(seeded: tuple[Tideline, dict[str, int]]) -> None:
    app, _ = seeded

    async def session() -> tuple[Any, str]:
        async with in_memory(app) as c:
            view = payload(await c.call_tool("memory_profile", {"as_of": "2023-05-12"}))
            bad = error_text(await c.call_tool("memory_profile", {"as_of": "May the fourth"}))
            return view, bad

    view, bad = anyio.run(session)
    assert sorted(f["value"] for f in view["facts"]) == ["Tokyo", "exhausted"]
    assert [p["status"] for p in view["relationships"]] == ["dating"]
    assert "as_of='May the fourth'" in bad


def test_the_api_and_the_panel_show_the_profile_as_of(
    seeded: tuple[Tideline, dict[str, int]],
) -> None:
    app, ids = seeded
    with client_for(app) as client:
        view = client.get("/api/profile", params={"as_of": "2023-06-30"}).json()
        assert [f["value"] for f in view["facts"]] == ["Osaka"]
        assert [e["title"] for e in view["events"]] == ["camping weekend"]
        bad = client.get("/api/profile", params={"as_of": "someday"})
        assert bad.status_code == 400 and "as_of='someday'" in bad.json()["error"]

        page = client.get("/profile", params={"as_of": "2023-05-21"}).text
        assert "As it stood on" in page and "Tokyo" in page and "Osaka" not in page
        assert "mark wrong" not in page  # no corrections on a past view
        timeline = client.get(f"/facts/{ids['osaka']}").text
        assert "recorded " in timeline and "2023-06-09 09:00" in timeline
        assert 'href="/profile?as_of=2023-06-09"' in timeline
        assert client.get("/profile?as_of=2023-06-09").status_code == 200
