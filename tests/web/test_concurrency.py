"""Bursts of concurrent requests against `tideline serve` with an embedding service (a loopback
server speaking the OpenAI protocol), and retries of every write with its idempotency key.

#21: 12 of 180 requests in 60-way bursts answered 500 (`apsw.ThreadingViolationError` from the
embedding cache), and 3 of those writes were stored anyway, so a client's retry duplicated them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from starlette.testclient import TestClient

from tests.mcp.conftest import start_http, stop
from tests.openai_stub import OpenAIStub

BURSTS, WIDTH = 3, 40


def _request(i: int) -> tuple[str, str, dict[str, Any], dict[str, str]]:
    """The i-th request of a burst: a keyed narrative, a keyed turn, or a search."""
    if i % 3 == 0:
        body = {"gesture": f"memory {i} about the harbour lanterns", "tags": ["harbour"]}
        return "POST", "/api/narratives", body, {"Idempotency-Key": f"n-{i}"}
    if i % 3 == 1:
        body = {"session": f"s{i % 5}", "role": "user", "text": f"turn {i} about lanterns"}
        return "POST", "/api/turns", {**body, "idempotency_key": f"t-{i}"}, {}
    return "GET", f"/api/search?query=harbour+lanterns+{i}&include_turns=true", {}, {}


async def _send(http: httpx.AsyncClient, i: int) -> httpx.Response:
    method, url, body, headers = _request(i)
    if method == "GET":
        return await http.get(url)
    return await http.post(url, json=body, headers=headers)


async def _bursts(base: str) -> tuple[list[httpx.Response], list[httpx.Response]]:
    limits = httpx.Limits(max_connections=WIDTH)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        first: list[httpx.Response] = []
        for burst in range(BURSTS):
            ids = range(burst * WIDTH, (burst + 1) * WIDTH)
            first += await asyncio.gather(*(_send(http, i) for i in ids))
        writes = [i for i in range(BURSTS * WIDTH) if i % 3 != 2]
        again = await asyncio.gather(*(_send(http, i) for i in writes))  # answers "lost"
        return first, list(again)


def test_concurrent_bursts_answer_every_request_and_retries_never_duplicate(
    tmp_path: Path,
) -> None:
    with OpenAIStub(dim=16) as stub:
        server = start_http(
            tmp_path,
            TIDELINE_EMBEDDER="openai",
            TIDELINE_EMBED_URL=stub.url,
            TIDELINE_EMBED_MODEL="stub",
        )
        base = f"http://127.0.0.1:{server.port}"
        try:
            first, again = asyncio.run(_bursts(base))
            failed = [(r.status_code, r.text[:200]) for r in first if r.status_code >= 300]
            assert failed == []
            assert all(r.status_code < 300 and r.json()["replayed"] for r in again)
            ids = {r.url.path: set() for r in first}  # type: ignore[var-annotated]
            for r in first:
                if r.request.method == "POST":
                    ids[r.url.path].add(r.json()["id"])
            assert [r.json()["id"] for r in again] == [
                r.json()["id"] for r in first if r.request.method == "POST"
            ]
            stats = httpx.get(f"{base}/api/stats", timeout=30).json()
            acknowledged = (len(ids["/api/narratives"]), len(ids["/api/turns"]))
            assert (stats["narratives"], stats["turns"]) == acknowledged == (40, 40)
            assert stats["narrative_vectors"] == 40 and stats["turn_vectors"] == 40
            assert "Traceback" not in server.stderr()
        finally:
            stop(server.proc)


def test_the_key_comes_in_the_body_or_as_the_idempotency_key_header(
    client: TestClient,
) -> None:
    first = client.post("/api/narratives", json={"gesture": "g"}, headers={"Idempotency-Key": "a"})
    again = client.post("/api/narratives", json={"gesture": "g", "idempotency_key": "a"})
    assert first.status_code == again.status_code == 201
    assert again.json()["id"] == first.json()["id"] and again.json()["replayed"]
    both = client.post(
        "/api/turns",
        json={"session": "s", "role": "user", "text": "t", "idempotency_key": "x"},
        headers={"Idempotency-Key": "y"},
    )
    assert both.status_code == 400 and "differ" in both.json()["error"], both.text
    assert client.get("/api/stats").json()["narratives"] == 1
