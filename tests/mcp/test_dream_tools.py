"""The dream tools and prompts over the real SDK client (in memory): `dream_run` against the
scripted OpenAI-protocol server or the client's own model through sampling, `memory_threads`, and
the dream prompts listed and rendered with a day's inputs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.consolidate.conftest import QUIET
from tests.consolidate.dream.conftest import CONVERSATION, DAY, DREAM_QUIET
from tests.llm_server import LLMServer
from tests.mcp.conftest import error_text, in_memory, payload
from tests.mcp.test_profile_tools import SCHEMAS, ClientModel, agent
from tideline.app import Tideline
from tideline.consolidate.dream import LAYER_NAMES
from tideline.mcp import build_server

DREAM_SCHEMAS = {
    **SCHEMAS,
    "Solidified": "dream_solidify",
    "Digest": "dream_digest",
    "DriftOut": "dream_drift",
    "DreamOut": "dream_sleep",
}


@pytest.fixture(autouse=True)
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BASE_URL", "API_KEY", "MODEL", "RUN_BUDGET", "STRUCTURED"):
        monkeypatch.delenv(f"TIDELINE_LLM_{name}", raising=False)


@pytest.fixture
def llm() -> Iterator[LLMServer]:
    with LLMServer() as server:
        for step, answer in {**QUIET, **DREAM_QUIET}.items():
            server.default(step, answer)
        yield server


def say_the_day(app: Tideline) -> list[int]:
    return [
        app.memory.sync_turn("s1", role, text, timestamp=f"{DAY}T09:{i:02d}:00Z").id
        for i, (role, text) in enumerate(CONVERSATION)
    ]


def kept(turns: list[int]) -> dict[str, Any]:
    return {"memories": [{"gesture": "They quit the bank.", "source_links": turns[:2]}]}


def test_dream_run_runs_the_layers_honours_the_budget_and_reports_progress(
    llm: LLMServer, tmp_path: Path
) -> None:
    app = agent(llm)
    try:
        turns = say_the_day(app)
        llm.default("dream_solidify", kept(turns))
        progress: list[tuple[float, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, message))

        async def session() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
            async with in_memory(app) as c:
                plan = payload(
                    await c.call_tool("dream_run", {"day": DAY, "layer": "solidify", "dry": True})
                )
                report = payload(
                    await c.call_tool("dream_run", {"date": DAY}, progress_callback=on_progress)
                )
                again = payload(await c.call_tool("dream_run", {"date": DAY, "layers": ["dream"]}))
                return plan, report, again

        plan, report, again = anyio.run(session)
        assert plan["status"] == "planned" and [r["name"] for r in plan["layers"]] == ["solidify"]
        assert report["status"] == "done" and report["llm"] == "openai:scripted-model"
        assert [r["name"] for r in report["layers"]] == list(LAYER_NAMES)
        assert report["written"]["narratives"] == [1] and report["written"]["dreams"]
        assert report["budget"] == 40000 and report["tokens_in"] + report["tokens_out"] > 0
        assert [m for _, m in progress] == list(LAYER_NAMES)
        assert [r["status"] for r in again["layers"]] == ["earlier"]
        last, full = app.dream.runs()[:2]
        assert last.records == [] and [r.layer for r in full.records] == list(LAYER_NAMES)
    finally:
        app.close()

    small = agent(llm, dream_run_budget=300, home=str(tmp_path / "small"))
    try:
        say_the_day(small)

        async def capped() -> dict[str, Any]:
            async with in_memory(small) as c:
                return dict(payload(await c.call_tool("dream_run", {"date": DAY})))

        stopped = anyio.run(capped)
        assert stopped["status"] == "stopped" and stopped["budget"] == 300
        assert stopped["layers"][0]["error"].startswith("budget:")
    finally:
        small.close()


def test_without_an_endpoint_dream_run_asks_the_clients_model_else_says_why_it_skipped() -> None:
    app = agent()
    try:
        turns = say_the_day(app)
        model = ClientModel({**QUIET, **DREAM_QUIET, "dream_solidify": kept(turns)}, DREAM_SCHEMAS)

        async def sampled() -> dict[str, Any]:
            client = Client(build_server(app), sampling_callback=model, mode="legacy")
            async with client as c:
                return dict(payload(await c.call_tool("dream_run", {"date": DAY})))

        async def without() -> dict[str, Any]:
            async with Client(build_server(app), mode="legacy") as c:
                return dict(payload(await c.call_tool("dream_run", {"date": "2026-03-15"})))

        report = anyio.run(sampled)
        assert report["status"] == "done" and report["llm"] == "mcp-sampling", report
        assert "llm_skipped" not in report
        assert {"dream_solidify", "dream_digest", "dream_sleep"} <= set(model.steps)
        assert report["written"]["narratives"] == [1]

        skipped = anyio.run(without)
        assert skipped["llm_skipped"].startswith("skipped: the MCP client does not offer")
        assert skipped["layers"][0]["status"] == "skipped"
    finally:
        app.close()


def test_memory_threads_lists_opens_touches_and_closes(llm: LLMServer) -> None:
    app = agent(llm)
    try:
        turns = say_the_day(app)
        llm.default("dream_solidify", kept(turns))
        app.dream.run(date=DAY, layers=["solidify"])

        async def session() -> list[Any]:
            async with in_memory(app) as c:
                out: list[Any] = [payload(await c.call_tool("memory_threads", {}))]
                args = {"action": "open", "title": "A bakery?", "raised_by": [1]}
                out.append(payload(await c.call_tool("memory_threads", args)))
                tid = out[-1]["thread"]["id"]
                args = {"action": "touch", "id": tid, "note": "Mia is in"}
                out.append(payload(await c.call_tool("memory_threads", args)))
                args = {"action": "close", "thread": tid, "status": "dropped", "reason": "no"}
                out.append(payload(await c.call_tool("memory_threads", args)))
                out.append(payload(await c.call_tool("memory_threads", {"status": "all"})))
                for bad in (
                    {"action": "close", "thread_id": 99},
                    {"action": "open", "title": "x", "memories": [7]},
                    {"action": "touch", "thread_id": tid, "note": "again"},
                    {"action": "sing"},
                ):
                    out.append(error_text(await c.call_tool("memory_threads", bad)))
                return out

        empty, opened, touched, closed, every, *errors = anyio.run(session)
        assert empty == {"threads": []}
        assert opened["thread"]["status"] == "open" and opened["thread"]["memories"] == [1]
        assert touched["thread"]["notes"] == ["Mia is in"]
        assert closed["thread"]["status"] == "dropped"
        assert [t["status"] for t in every["threads"]] == ["dropped"]
        assert errors[0] == "thread 99 does not exist; list them with memory_threads"
        assert "memories [7] do not exist" in errors[1]
        assert "is already dropped" in errors[2]
        assert "memory_threads" in errors[3] and "'sing'" in errors[3]
    finally:
        app.close()


def test_the_dream_prompts_are_listed_and_render_with_the_days_inputs(llm: LLMServer) -> None:
    app = agent(llm)
    try:
        turns = say_the_day(app)

        async def session() -> tuple[Any, ...]:
            async with in_memory(app) as c:
                listed = (await c.list_prompts()).prompts
                solidify = await c.get_prompt("dream_solidify", {"date": DAY})
                quiet_day = await c.get_prompt("dream_solidify", {"date": "2026-03-20"})
                dream = await c.get_prompt("dream_sleep", {"date": DAY})
                with pytest.raises(MCPError) as drift:
                    await c.get_prompt("dream_drift", {})
                with pytest.raises(MCPError) as bad_date:
                    await c.get_prompt("dream_digest", {"date": "someday"})
                return listed, solidify, quiet_day, dream, drift.value, bad_date.value

        listed, solidify, quiet_day, dream, drift, bad_date = anyio.run(session)
        names = {p.name: p for p in listed}
        assert set(names) == {"dream_solidify", "dream_digest", "dream_drift", "dream_sleep"}
        assert [(a.name, a.required) for a in names["dream_digest"].arguments] == [("date", False)]
        assert "version 1" in names["dream_solidify"].description
        text = solidify.messages[0].content.text
        assert solidify.messages[0].role == "user"
        assert "call the\n`memory_write` tool" in text and "<!--" not in text
        assert f"## day\n{DAY}" in text
        assert all(f"`{t}`" in text for t in turns) and CONVERSATION[0][1] in text
        assert CONVERSATION[0][1] not in quiet_day.messages[0].content.text
        assert "## memories\n(none)" in dream.messages[0].content.text
        assert "no lived memory to drift from" in str(drift)
        assert "someday" in str(bad_date)
    finally:
        app.close()
