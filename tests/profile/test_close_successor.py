"""A person closes a fact naming the fact that replaced it: `tideline fact close ID --successor
ID`, `fact_close(successor=…)` over the real MCP client and `POST /api/facts/ID/close`. The old
fact ends when its successor began and the two share one timeline, as an arbitration's
`accept_new` would leave them; a successor that is the fact itself, unknown or no longer live is
refused in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from tests.mcp.conftest import error_text, in_memory, payload
from tests.web.conftest import client_for
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings
from tideline.errors import IllegalTransition, InvalidInput
from tideline.profile import FactDraft

pytestmark = pytest.mark.engines

OSAKA_FROM = "2023-06-09T10:00:00Z"


@pytest.fixture
def moved(engine_env: str) -> Iterator[tuple[Tideline, int, int]]:
    """Tokyo (from May 2023) and Osaka (from June), both live, unlinked: the home the CLI opens."""
    app = Tideline(Settings.load(overrides={"embedder": "none"}))
    cs = app.profile.read().changeset()
    tokyo = cs.add_fact(
        FactDraft("user", "city", "lives in Tokyo", valid_from="2023-05-08T09:00:00Z")
    )
    osaka = cs.add_fact(FactDraft("user", "city", "lives in Osaka", valid_from=OSAKA_FROM))
    ids = app.profile.apply(cs).ids
    yield app, ids[tokyo], ids[osaka]
    app.close()


def joined(app: Tideline, tokyo: int, osaka: int, closed: dict[str, Any]) -> None:
    """What a close naming its successor leaves: the end, the reason, one timeline."""
    assert (closed["id"], closed["status"], closed["valid_to"]) == (tokyo, "closed", OSAKA_FROM)
    timeline = app.profile.timeline(osaka)
    assert [f.value for f in timeline.chain] == ["lives in Tokyo", "lives in Osaka"]
    [change] = [c for c in timeline.changes if c.fact_id == tokyo and c.to_status == "closed"]
    assert (change.at, change.why) == (OSAKA_FROM, f"superseded by #{osaka}: moved")
    assert app.profile.fact(osaka).status == "suspected"  # the successor stands, undisputed
    assert app.profile.fact(osaka).disputed_by == []


def test_the_cli_closes_a_fact_naming_its_successor(moved: tuple[Tideline, int, int]) -> None:
    app, tokyo, osaka = moved
    runner = CliRunner()
    args = ["fact", "close", str(tokyo), "--successor", str(osaka), "--why", "moved", "--json"]
    done = runner.invoke(cli, args)
    assert done.exit_code == 0, done.stderr
    joined(app, tokyo, osaka, json.loads(done.stdout))
    again = runner.invoke(cli, ["fact", "close", str(osaka), "--successor", str(tokyo)])
    assert again.exit_code != 0 and again.stdout == "" and again.stderr.count("\n") == 1
    assert f"fact #{tokyo} is closed" in again.stderr  # a successor must still be believed


def test_mcp_fact_close_takes_a_successor(moved: tuple[Tideline, int, int]) -> None:
    app, tokyo, osaka = moved

    async def session() -> tuple[dict[str, Any], str]:
        async with in_memory(app) as c:
            itself = error_text(
                await c.call_tool("fact_close", {"fact_id": osaka, "successor": osaka})
            )
            done = payload(
                await c.call_tool(
                    "fact_close", {"fact_id": tokyo, "why": "moved", "successor": osaka}
                )
            )
            return done, itself

    done, itself = anyio.run(session)
    joined(app, tokyo, osaka, done["fact"])
    assert f"fact #{osaka} cannot succeed itself" in itself


def test_the_api_closes_a_fact_naming_its_successor(moved: tuple[Tideline, int, int]) -> None:
    app, tokyo, osaka = moved
    with client_for(app) as client:
        unknown = client.post(f"/api/facts/{tokyo}/close", json={"successor": 999})
        assert unknown.status_code == 404 and "fact #999" in unknown.json()["error"]
        assert app.profile.fact(tokyo).status == "suspected"  # nothing applied
        done = client.post(f"/api/facts/{tokyo}/close", json={"why": "moved", "successor": osaka})
        assert done.status_code == 200, done.text
        joined(app, tokyo, osaka, done.json()["fact"])


def test_a_successor_that_already_replaced_another_fact_is_refused(
    moved: tuple[Tideline, int, int],
) -> None:
    app, tokyo, osaka = moved
    cs = app.profile.read().changeset()
    kyoto = cs.add_fact(
        FactDraft("user", "city", "lives in Kyoto", valid_from="2023-07-01T10:00:00Z")
    )
    kyoto_id = app.profile.apply(cs).ids[kyoto]
    app.profile.close(tokyo, why="moved", successor=osaka)
    with pytest.raises(InvalidInput, match=rf"fact #{osaka} already supersedes #{tokyo}"):
        cs = app.profile.read().changeset()
        cs.succeed(kyoto_id, osaka)
        app.profile.apply(cs)
    with pytest.raises(IllegalTransition, match=rf"fact #{tokyo} is closed"):
        app.profile.close(osaka, successor=tokyo)
