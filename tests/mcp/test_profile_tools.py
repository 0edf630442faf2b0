"""The profile and sleep tools over the real SDK client (in memory), against the scripted
OpenAI-protocol server or the client's own model through MCP sampling."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from tests.consolidate.conftest import QUIET
from tests.consolidate.story import REPLY, SESSION, USER, extraction, script
from tests.llm_server import Answer, LLMServer
from tests.mcp.conftest import agent_settings, error_text, in_memory, payload
from tideline.app import Tideline
from tideline.mcp import build_server


@pytest.fixture(autouse=True)
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BASE_URL", "API_KEY", "MODEL", "RUN_BUDGET", "STRUCTURED"):
        monkeypatch.delenv(f"TIDELINE_LLM_{name}", raising=False)


@pytest.fixture
def llm() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


def agent(llm: LLMServer | None = None, **overrides: Any) -> Tideline:
    """The test agent without an embedder (the story needs none), with the scripted LLM."""
    if llm is not None:
        overrides |= {"llm_base_url": llm.url, "llm_model": "scripted-model"}
    return Tideline(agent_settings(embedder="none", llm_backoff=0.001, **overrides))


def say(app: Tideline) -> int:
    turn = app.memory.sync_turn(SESSION, "user", USER).id
    app.memory.sync_turn(SESSION, "assistant", REPLY)
    return turn


async def poll(check: Any, timeout: float = 10.0) -> None:
    """`wait_until` for async tests: yields to the event loop between checks."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"condition not met within {timeout}s"
        await anyio.sleep(0.02)


def snapshot_of(identity: str) -> str:
    """The snapshot's part of the identity block's text (T0)."""
    assert "# What I know (snapshot " in identity
    return identity.split("# What I know (snapshot ", 1)[1]


def test_sleep_profile_reject_close_and_timeline(llm: LLMServer) -> None:
    app = agent(llm)

    async def session() -> None:
        async with in_memory(app) as c:
            turn = payload(
                await c.call_tool("sync_turn", {"session": SESSION, "role": "user", "text": USER})
            )["id"]
            script(llm, turn)
            plan = payload(await c.call_tool("sleep_run", {"dry": True}))  # a synonym
            assert plan["status"] == "planned" and plan["plan"]["NewFact"] == 2
            assert app.profile.counts()["facts"] == 0 and app.profile.runs() == []

            report = payload(await c.call_tool("sleep_run", {}))
            assert (
                report["status"] == "done"
                and report["llm"] == "openai:scripted-model"
                and not report["errors"]
            )
            assert (
                report["tokens"]["calls"] == 5 and "llm_skipped" not in report
            )  # no verify: 1 session
            facts = payload(await c.call_tool("memory_profile", {}))["facts"]
            assert {f["category"]: f["value"] for f in facts} == {
                "city": "lives in Osaka",
                "job": "works as a nurse",
            }
            for f in facts:
                assert [(e["turn_id"], e["text"]) for e in f["evidence"]] == [(turn, USER)]
            city, job = (f["id"] for f in sorted(facts, key=lambda f: f["category"]))
            only = payload(await c.call_tool("memory_profile", {"category": "job"}))["facts"]
            assert [f["id"] for f in only] == [job]

            identity = payload(await c.call_tool("memory_context", {}))["text"]
            assert "lives in Osaka" in snapshot_of(identity)
            rows = app.profile.counts()
            got = await c.call_tool("fact_reject", {"id": city, "reason": "moved back to Tokyo"})
            rejected = payload(got)["fact"]
            assert (rejected["status"], rejected["rejected_why"]) == (
                "rejected",
                "moved back to Tokyo",
            )
            identity = payload(await c.call_tool("memory_context", {}))["text"]
            assert "lives in Osaka" not in identity  # gone from T0 at once, not after a sleep
            assert "works as a nurse" in snapshot_of(identity)
            # the rejected fact's probe is never offered; the live one's still is
            about = {"message": "Osaka is home, I started as a nurse there"}
            offered = payload(await c.call_tool("memory_context", about))["blocks"][0]
            [t1q] = [x for x in offered["sections"] if x["tier"] == "T1q"]
            [question] = [i for p in t1q["parts"] for i in p["items"]]
            assert question["extra"] == f"probe f:{job}" and "nurse" in question["text"]
            ended = {x.fact_id: x.outcome for x in app.profile.strategies(status="resolved")}
            assert ended == {city: "obsolete"}
            closed = payload(await c.call_tool("fact_close", {"fact_id": job}))["fact"]
            assert closed["status"] == "closed" and closed["valid_to"]
            assert app.profile.counts()["facts"] == rows["facts"]  # nothing deleted

            timeline = payload(await c.call_tool("fact_timeline", {"fact_id": city}))
            assert [(ch["to_status"], ch["why"]) for ch in timeline["changes"]][1:] == [
                ("rejected", "moved back to Tokyo")
            ]
            assert payload(await c.call_tool("memory_profile", {}))["facts"] == []
            everything = payload(await c.call_tool("memory_profile", {"status": "all"}))
            assert sorted(f["status"] for f in everything["facts"]) == ["closed", "rejected"]

            final = error_text(await c.call_tool("fact_close", {"fact_id": city}))
            assert final.startswith(f"fact #{city} is rejected, which is final")
            missing = error_text(await c.call_tool("fact_timeline", {"fact_id": 999}))
            assert missing.startswith("fact #999 does not exist")
            assert missing.endswith("next: call memory_profile with status='all' to find fact ids")
            bad = error_text(await c.call_tool("memory_profile", {"status": "maybe"}))
            assert bad.startswith("memory_profile: argument 'status'")

    try:
        anyio.run(session)
    finally:
        app.close()


def test_sleep_run_honours_the_run_budget(llm: LLMServer) -> None:
    app = agent(llm, llm_run_budget=50)
    try:
        script(llm, say(app))

        async def session() -> dict[str, Any]:
            async with in_memory(app) as c:
                return dict(payload(await c.call_tool("sleep_run", {})))

        report = anyio.run(session)
        assert report["status"] == "failed" and "budget" in report["errors"][0]
        assert llm.asked == []  # refused before it was sent
        assert app.profile.counts()["facts"] == 0 and app.profile.read().processed == {}
        assert app.profile.runs()[0].status == "failed"
    finally:
        app.close()


def test_writers_are_not_blocked_while_sleep_run_waits_on_a_slow_llm(llm: LLMServer) -> None:
    app = agent(llm)
    script(llm, say(app))
    llm.script(Answer(llm.defaults["extract"].content, delay=60), step="extract")
    server = build_server(app)
    waits: list[float] = []

    async def session() -> dict[str, Any]:
        async with Client(server) as sleeper, Client(server) as writer:
            out: dict[str, Any] = {}

            async def sleep() -> None:
                out.update(payload(await sleeper.call_tool("sleep_run", {})))

            async with anyio.create_task_group() as tg:
                tg.start_soon(sleep)
                await poll(lambda: "extract" in llm.asked)
                for n in range(3):
                    t0 = time.monotonic()
                    turn = {"session": "later", "role": "user", "text": f"message {n}"}
                    assert payload(await writer.call_tool("sync_turn", turn))["created"]
                    waits.append(time.monotonic() - t0)
                t0 = time.monotonic()
                payload(await writer.call_tool("memory_write", {"gesture": "Said hello thrice"}))
                waits.append(time.monotonic() - t0)
                busy = error_text(await writer.call_tool("sleep_run", {}))
                assert busy.startswith("another sleep is running on ")
                assert busy.endswith(
                    "next: wait for that sleep to finish; the memory tools work meanwhile"
                )
                assert not out  # the sleep is still waiting on the model
                llm.closing.set()  # the slow answer comes now
            return out

    try:
        report = anyio.run(session)
    finally:
        app.close()
    assert report["status"] == "done" and report["applied"]["NewFact"] == 2
    assert len(waits) == 4 and max(waits) < 1.0, waits


#: The schema each LLM step sends, by title -> the step.
SCHEMAS = {
    "Extraction": "extract",
    "Behaviour": "behaviour",
    "Classification": "classify",
    "Verification": "verify",
    "Arbitration": "arbitrate",
    "Edges": "edges",
    "UserModelOut": "user_model",
    "TrajectoryOut": "trajectory",
}


class ClientModel:
    """The MCP client's own model: answers each step (known by the schema in the system
    prompt, as sampling has no JSON mode) with the story's scripted answer."""

    def __init__(self, answers: dict[str, Any], schemas: dict[str, str] | None = None) -> None:
        self.answers = answers
        self.schemas = schemas or SCHEMAS  # schema title -> step
        self.steps: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        system = params.system_prompt or ""
        step = next(s for title, s in self.schemas.items() if f'"title":"{title}"' in system)
        self.steps.append(step)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=json.dumps(self.answers[step])),
            model="client-model-1",
        )


def test_without_an_endpoint_sleep_run_asks_the_clients_model() -> None:
    app = agent()
    try:
        turn = say(app)
        model = ClientModel({**QUIET, "extract": extraction(turn)})

        async def session() -> dict[str, Any]:
            client = Client(build_server(app), sampling_callback=model, mode="legacy")
            async with client as c:
                return dict(payload(await c.call_tool("sleep_run", {})))

        report = anyio.run(session)
        assert report["status"] == "done" and "llm_skipped" not in report, report
        assert report["llm"] == "mcp-sampling" and report["tokens"]["estimated"]
        assert model.steps[0] == "extract" and "classify" in model.steps
        facts = app.profile.facts()
        assert sorted(f.value for f in facts) == ["lives in Osaka", "works as a nurse"]
        assert all([e.turn_id for e in f.evidence] == [turn] for f in facts)
    finally:
        app.close()


def test_without_an_endpoint_or_sampling_the_llm_steps_are_skipped_and_it_says_why() -> None:
    app = agent()
    try:
        say(app)

        async def session() -> dict[str, Any]:
            async with Client(build_server(app), mode="legacy") as c:
                return dict(payload(await c.call_tool("sleep_run", {})))

        report = anyio.run(session)
        assert report["status"] == "skipped"  # not "done": the LLM steps did not run
        assert report["llm_skipped"].startswith("skipped: the MCP client does not offer sampling")
        assert report["reason"].startswith("the MCP client does not offer sampling")
        assert set(report["skipped"]) == {"extract", "behaviour", "classify"}
        assert app.profile.read().processed == {}  # left for a run with an LLM
        assert app.profile.runs()[0].status == "skipped"
    finally:
        app.close()


def test_with_the_sdk_clients_default_connection_sleep_run_samples_in_rounds() -> None:
    app = agent()
    try:
        turn = say(app)
        model = ClientModel({**QUIET, "extract": extraction(turn)})

        async def session() -> dict[str, Any]:
            async with Client(build_server(app), sampling_callback=model) as c:  # 2026-07-28
                return dict(payload(await c.call_tool("sleep_run", {})))

        report = anyio.run(session)
        assert report["status"] == "done" and "llm_skipped" not in report, report
        assert report["llm"] == "mcp-sampling" and report["tokens"]["calls"] == len(model.steps)
        assert model.steps[0] == "extract" and "classify" in model.steps
        facts = app.profile.facts()
        assert sorted(f.value for f in facts) == ["lives in Osaka", "works as a nurse"]
    finally:
        app.close()
