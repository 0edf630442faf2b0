"""One id type for every entry point (`tideline.fields.id_field`): 1 … 2^63 − 1, what SQLite and
PostgreSQL store. #21: ids of 2^63 crashed `fact_reject` / `fact_close` / `fact_timeline`
("unexpected OverflowError"), the panel's `/facts/9223372036854775808` (500) and
`tideline fact show 9223372036854775808` (a traceback)."""

from __future__ import annotations

import re

import anyio
import pytest
from mcp import Client
from starlette.testclient import TestClient
from typer.testing import CliRunner

from tests.mcp.conftest import error_text
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings
from tideline.errors import NotFound
from tideline.fields import COMMANDS, MAX_ID
from tideline.mcp import build_server
from tideline.web import http_app

HUGE = 2**63  # one past what the engines store
#: Fields that hold record ids, by name.
ID_NAMES = {"source_links", "supersedes", "turns", "narratives", "memories"}


def test_every_id_field_is_the_one_id_type() -> None:
    ids = [
        (c.tool or c.cli, f)
        for c in COMMANDS
        for f in c.fields
        if f.kind is int and (f.name.endswith("_id") or f.name in ID_NAMES)
    ]
    assert len(ids) >= 8
    assert [(c, f.name) for c, f in ids if (f.ge, f.le) != (1, MAX_ID)] == []


@pytest.fixture
def agent() -> Tideline:
    app = Tideline(Settings.load(overrides={"embedder": "none"}))
    yield app  # type: ignore[misc]
    app.close()


def test_the_core_treats_an_id_it_cannot_store_as_missing(agent: Tideline) -> None:
    for call in (
        lambda: agent.profile.timeline(HUGE),
        lambda: agent.profile.reject(HUGE, "wrong"),
        lambda: agent.profile.close(HUGE),
        lambda: agent.dream.touch_thread(HUGE, "moved"),
        lambda: agent.dream.close_thread(HUGE),
    ):
        with pytest.raises(NotFound):
            call()


@pytest.mark.parametrize(
    "args",
    [
        ["fact", "show", str(HUGE)],
        ["fact", "reject", str(HUGE), "--why", "wrong"],
        ["trace", str(HUGE)],
        ["write", "x", "--link", str(HUGE)],
        ["forget", "--narrative", str(10**30)],
    ],
)
def test_the_cli_refuses_it_in_one_line(args: list[str]) -> None:
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code == 2 and result.exception is None) or isinstance(
        result.exception, SystemExit
    )
    said = " ".join(re.sub("[│╭╮╰╯─]", " ", result.stderr).split())  # rich's error box
    assert "less than or equal to 9223372036854775807" in said, said
    assert "Traceback" not in result.stderr


def test_mcp_refuses_it_as_a_tool_error(agent: Tideline) -> None:
    calls = [
        ("fact_reject", {"fact_id": HUGE, "why": "wrong"}),
        ("fact_close", {"fact_id": HUGE}),
        ("fact_timeline", {"fact_id": 2**64}),
        ("memory_trace", {"narrative_id": HUGE}),
        ("memory_write", {"gesture": "g", "source_links": [HUGE]}),
        ("memory_threads", {"action": "touch", "thread_id": HUGE, "note": "n"}),
    ]

    async def scenario() -> list[str]:
        async with Client(build_server(agent)) as client:
            return [error_text(await client.call_tool(t, a)) for t, a in calls]

    said = anyio.run(scenario)
    assert all("less than or equal to 9223372036854775807" in s for s in said), said
    assert not any("unexpected" in s for s in said)


@pytest.mark.parametrize(
    "path",
    [f"/facts/{HUGE}", f"/api/facts/{HUGE}", f"/trace/{HUGE}", f"/turns/{HUGE}", f"/runs/{HUGE}"],
)
def test_the_panel_and_the_api_answer_422_not_500(agent: Tideline, path: str) -> None:
    with TestClient(http_app(agent), base_url="http://127.0.0.1:8765") as client:
        answer = client.get(path)
    assert answer.status_code == 422, answer.text[:300]
    assert "less than or equal to 9223372036854775807" in answer.text


def test_the_largest_storable_id_is_simply_missing(agent: Tideline) -> None:
    with TestClient(http_app(agent), base_url="http://127.0.0.1:8765") as client:
        assert client.get(f"/facts/{MAX_ID}").status_code == 404
        assert client.get(f"/api/facts/{MAX_ID}").status_code == 404
