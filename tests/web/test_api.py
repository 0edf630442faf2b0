"""The REST API in process (the guarded app `serve` runs): every service round-trips, bad input
is a one-line 4xx, and background runs report progress until they finish."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.consolidate.conftest import QUIET
from tests.helpers import wait_until
from tests.library.corpus import build
from tests.llm.conftest import llm_settings
from tests.llm_server import LLMServer
from tests.profile.conftest import rebuild_snapshot
from tests.web.conftest import client_for, t0_of
from tideline.app import Tideline
from tideline.config import Settings


def _ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _error(response: Any, status: int) -> str:
    assert response.status_code == status, response.text
    message = response.json()["error"]
    assert isinstance(message, str) and "\n" not in message
    return message


def test_memory_round_trip(client: TestClient) -> None:
    turn = _ok(
        client.post(
            "/api/turns",
            json={"session": "s1", "role": "user", "text": "I adopted a cat named Miso"},
        )
    )
    assert turn["created"] is True
    again = _ok(
        client.post(
            "/api/turns",
            json={"session": "s1", "role": "user", "text": "I adopted a cat named Miso"},
        )
    )
    assert again["id"] == turn["id"] and again["created"] is False
    written = _ok(
        client.post(
            "/api/narratives",
            json={
                "gesture": "Adopted a cat named Miso",
                "tags": "pets, home",
                "source_links": [turn["id"]],
            },
        ),
        201,
    )
    assert set(written["tags"]) == {"home", "pets"}
    hits = _ok(client.get("/api/search", params={"query": "Miso"}))["hits"]  # turns by default
    assert {(h["type"], h["id"]) for h in hits} >= {
        ("narrative", written["id"]),
        ("turn", turn["id"]),
    }
    narrow = client.get("/api/search", params={"query": "Miso", "include_turns": "false"})
    assert {h["type"] for h in _ok(narrow)["hits"]} == {"narrative"}
    assert all("lex_rank" in h and "vec_rank" in h for h in hits)  # the score parts
    trace = _ok(client.get(f"/api/narratives/{written['id']}/trace", params={"window": 1}))
    assert [t["turn"]["id"] for w in trace["windows"] for t in w if t["source"]] == [turn["id"]]
    stats = _ok(client.get("/api/stats"))
    assert (stats["turns"], stats["narratives"]) == (1, 1)
    assert _ok(client.get("/api/sessions"))["sessions"][0]["key"] == "s1"
    assert (
        _ok(client.get("/api/sessions/s1/turns"))["turns"][0]["text"]
        == "I adopted a cat named Miso"
    )
    plan = _ok(client.post("/api/forget", json={"query": "Miso"}))
    assert plan["done"] is False and not plan["empty"]  # shown, not erased
    assert _ok(client.get("/api/stats"))["turns"] == 1


def test_profile_corrections(client: TestClient, seeded: dict[str, Any], agent: Tideline) -> None:
    fact = seeded["fact"]
    rebuild_snapshot(agent.profile)  # as a Sleep run's step 13 does
    assert "lives in Lisbon" in t0_of(client)
    facts = _ok(client.get("/api/profile"))["facts"]
    assert [f["id"] for f in facts] == [fact] and facts[0]["evidence"][0]["text"]
    assert "'why'" in _error(client.post(f"/api/facts/{fact}/reject", json={}), 422)
    rejected = _ok(client.post(f"/api/facts/{fact}/reject", json={"why": "never lived there"}))
    assert rejected["fact"]["status"] == "rejected"
    assert "lives in Lisbon" not in t0_of(client)  # the identity block changed at once
    assert _ok(client.get("/api/profile"))["facts"] == []  # live facts only by default
    everything = _ok(client.get("/api/profile", params={"status": "all"}))["facts"]
    assert everything[0]["rejected_why"] == "never lived there"  # kept, never deleted
    timeline = _ok(client.get(f"/api/facts/{fact}"))
    assert [c["to_status"] for c in timeline["changes"]][-1] == "rejected"
    assert "fact" in _error(client.post(f"/api/facts/{fact}/close", json={}), 400)  # final
    _error(client.post("/api/facts/999/close", json={"why": "x"}), 404)


def test_analysis_and_injection(client: TestClient, seeded: dict[str, Any]) -> None:
    graph = _ok(client.get("/api/graph"))
    assert {e["name"] for e in graph["entities"]} == {"Ana", "Lisbon"}
    assert graph["edges"][0]["weight"] == 1
    heat = _ok(client.get("/api/heatmap", params={"since": "2026-01-01"}))
    assert heat["total_hits"] == 0 and "note" in heat
    block = _ok(client.get("/api/prefetch", params={"message": "How was Lisbon?"}))
    assert "Lisbon" in block["text"]
    identity = _ok(client.post("/api/context", json={}))
    assert identity["blocks"] and isinstance(identity["text"], str)
    scan = _ok(client.get("/api/scan"))
    assert "markdown" in scan


def test_library_services(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    root.mkdir()
    build(root)
    app = Tideline(Settings.load(overrides={"memo_root": str(root), "embedder": "none"}))
    try:
        with client_for(app) as client:
            reindexed = _ok(client.post("/api/library/reindex", json={"path": "*"}))
            assert {c["collection"] for c in reindexed["collections"]} >= {"infra"}
            status = _ok(client.get("/api/library/status"))
            assert {c["name"] for c in status["collections"]} == {"infra", "life/home"}
            found = _ok(
                client.get(
                    "/api/library/search",
                    params={"query": "firewall rule 4711", "path": "infra", "mode": "lex"},
                )
            )
            assert found["hits"][0]["location"] == "infra/runbook.md:13"
            written = _ok(
                client.post(
                    "/api/library/notes",
                    json={"path": "infra/new.md", "text": "# New\nport 9931\n"},
                ),
                201,
            )
            assert written["created"] is True
            read = _ok(client.get("/api/library/read", params={"path": "infra/new.md"}))
            assert "port 9931" in read["text"]
            assert _ok(client.get("/api/library/route", params={"query": "firewall"}))["candidates"]
            _error(client.get("/api/library/read", params={"path": "../etc/passwd"}), 400)
    finally:
        app.close()


def test_sleep_and_dream_runs_report_progress(client: TestClient, seeded: dict[str, Any]) -> None:
    started = _ok(client.post("/api/sleep", json={}), 202)
    # a sleep without an LLM may be over before the answer is written
    assert started["status"] in ("running", "skipped") and started["total"] > 1

    def finished() -> Any:
        run = _ok(client.get(f"/api/runs/{started['id']}"))
        return run if run["status"] != "running" else None

    run = wait_until(finished, timeout=60)
    assert run["status"] == "skipped", run  # no LLM configured: not "done"
    assert run["done"] == run["total"] and run["events"]
    assert run["report"]["status"] == "skipped" and "tokens" in run["report"]
    assert run["report"]["skipped"] and run["report"]["reason"].startswith("no LLM configured")
    assert "nap" in _error(client.post("/api/dream", json={"layers": ["nap"]}), 400)
    dream = _ok(client.post("/api/dream", json={"dry_run": True, "layers": "comb, dream"}), 202)
    over = wait_until(
        lambda: (r := _ok(client.get(f"/api/runs/{dream['id']}")))["status"] != "running" and r,
        timeout=60,
    )
    assert [x["name"] for x in over["report"]["layers"]] == ["comb", "dream"]
    runs = _ok(client.get("/api/runs"))
    assert [r["kind"] for r in runs["started"]] == ["dream", "sleep"]
    assert runs["sleep"] and runs["sleep"][0]["status"]
    _error(client.get("/api/runs/99"), 404)


def test_bad_input_is_a_one_line_4xx(client: TestClient) -> None:
    assert "'k'" in _error(client.get("/api/search", params={"query": "x", "k": "ten"}), 422)
    assert "bogus" in _error(client.get("/api/search", params={"query": "x", "bogus": 1}), 422)
    assert "query" in _error(client.get("/api/search"), 422)
    _error(
        client.post(
            "/api/turns", content=b"{not json", headers={"content-type": "application/json"}
        ),
        422,
    )
    assert "narrative" in _error(client.get("/api/narratives/424242/trace"), 404)
    _error(client.get("/api/narratives/0/trace"), 422)
    _error(client.post("/api/narratives", json={"gesture": ""}), 400)
    _error(client.get("/api/sessions/nope/turns"), 404)
    assert _ok(client.get("/api/stats"))["narratives"] == 0  # nothing half written


def test_a_second_sleep_waits_for_the_first(tmp_path: Path) -> None:
    with LLMServer() as llm:
        for step, answer in QUIET.items():
            llm.default(step, answer)
        llm.delay = 1.0  # each LLM call takes a second: the first run is still going on
        app = Tideline(llm_settings(llm.url, embedder="none"))
        try:
            app.memory.sync_turn("s", "user", "I started a new job at the harbour")
            with client_for(app) as client:
                first = _ok(client.post("/api/sleep", json={}), 202)
                assert "still going on" in _error(client.post("/api/sleep", json={}), 409)
                run = wait_until(
                    lambda: (r := _ok(client.get(f"/api/runs/{first['id']}")))["status"] != "running" and r,
                    timeout=60,
                )  # fmt: skip
                assert run["status"] == "done" and run["report"]["tokens"]["calls"] >= 1
                assert _ok(client.post("/api/sleep", json={"dry_run": True}), 202)["id"] == 2
                wait_until(
                    lambda: _ok(client.get("/api/runs/2"))["status"] != "running", timeout=60
                )
        finally:
            app.close()


def test_a_failed_sleep_says_why_in_its_run(tmp_path: Path) -> None:
    """A sleep whose extract step failed showed `"error": null` in /api/runs/N (issue 31): the
    run's error is the report's own word."""
    with LLMServer() as llm:
        for step, answer in QUIET.items():
            llm.default(step, answer)
        llm.fail_next = [400] * 20  # refused, not retried: the first LLM step fails
        app = Tideline(llm_settings(llm.url, embedder="none"))
        try:
            app.memory.sync_turn("s", "user", "I started a new job at the harbour")
            with client_for(app) as client:
                started = _ok(client.post("/api/sleep", json={}), 202)
                run = wait_until(
                    lambda: (r := _ok(client.get(f"/api/runs/{started['id']}")))["status"] != "running" and r,
                    timeout=60,
                )  # fmt: skip
                assert run["status"] == "failed", run
                assert run["error"] and "failed" in run["error"] and "400" in run["error"], run
                assert run["error"] == " ".join("; ".join(run["report"]["errors"]).split())
        finally:
            app.close()


def test_api_says_what_is_there(client: TestClient) -> None:
    """`/api` lists every route of the schema; a browser is sent to the reference."""
    index = client.get("/api")
    assert index.status_code == 200, index.text
    body = index.json()
    assert body["reference"] == "/api/docs" and body["openapi"] == "/api/openapi.json"
    schema = client.get("/api/openapi.json").json()
    listed = {(r["method"], r["path"]) for r in body["routes"]}
    declared = {(m.upper(), p) for p, ops in schema["paths"].items() for m in ops}
    assert listed == declared and len(listed) > 20
    assert all(r["summary"] and r["summary"][0].isupper() for r in body["routes"]), body["routes"]
    browser = client.get("/api", headers={"accept": "text/html"}, follow_redirects=False)
    assert browser.status_code == 303 and browser.headers["location"] == "/api/docs"


def test_the_api_reference_is_a_page_that_works_offline(client: TestClient) -> None:
    page = client.get("/api/docs")
    assert page.status_code == 200
    text = page.text
    schema = client.get("/api/openapi.json").json()
    for path, ops in schema["paths"].items():
        for method in ops:
            assert f"<code>{method.upper()} {path}</code>" in text, (method, path)
    # the arguments, with the bounds and defaults the CLI and MCP tools share
    assert "<code>include_turns</code>" in text and "integer, 1–200" in text
    assert '<code>gesture</code> <span class="badge">required</span>' in text
    # nothing from another host: no CDN script, style or font
    assert not re.findall(r'(?:src|href)="(?:https?:)?//', text), "an external asset"
    assert '<script src="/static/panel.js"' in text


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('{"gesture": "x",', "the request body is not valid JSON (Expecting property name"),
        ("not json", "the request body is not valid JSON (Expecting value at character 0)"),
        ("", "the request has no body; send a JSON object"),
        ("[1, 2]", "the request body must be a JSON object ({…}), got [1, 2]"),
        ("{}", "missing body field 'gesture'"),
        ('{"gesture": 5}', "body field 'gesture': input should be a valid string (got 5)"),
    ],
)
def test_a_bad_body_is_told_what_is_wrong_in_words(
    client: TestClient, body: str, said: str
) -> None:
    """Not `body field '0': jSON decode error (got {})`."""
    answer = client.post("/api/narratives", content=body, headers={"content-type": "application/json"})  # fmt: skip
    assert answer.status_code == 422
    error = answer.json()["error"]
    assert error.startswith(said) and error.endswith("see /api/docs for each route's fields")
    assert "jSON" not in error and "got {}" not in error and "\n" not in error
