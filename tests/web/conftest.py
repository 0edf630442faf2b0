"""The web driver's fixtures: an agent with a little of everything, the app in process (starlette's
TestClient, through the same guard `serve` runs) and `tideline serve` as a real server."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from tests.profile.conftest import add_fact
from tests.web.chromium import chromium
from tideline.app import Tideline
from tideline.clock import ManualClock
from tideline.config import Settings
from tideline.mcp import MCP_ENDPOINT
from tideline.web import http_app

BASE = "http://127.0.0.1:8765"
SEEDED_AT = dt.datetime(2026, 5, 3, 12, 0, tzinfo=dt.UTC)  # the day after the trip was told
SCRIPT = "<script>alert('stored')</script>"
TOKEN = "web-test-token-0123456789abcdef"


def seed(app: Tideline) -> dict[str, Any]:
    """Turns in two sessions, two narratives (one with a stored <script>), a fact with evidence."""
    m = app.memory
    t1 = m.sync_turn(
        "trip", "user", "We flew to Lisbon with Ana in May.", timestamp="2026-05-02T10:00:00Z"
    )
    t2 = m.sync_turn("trip", "assistant", "How was Lisbon?", timestamp="2026-05-02T10:01:00Z")
    t3 = m.sync_turn("notes", "user", SCRIPT, timestamp="2026-05-03T09:00:00Z")
    lisbon = m.write(
        gesture="Flew to Lisbon with Ana",
        context="a spring trip",
        tags=["travel"],
        entities_role="Ana: companion; Lisbon: destination",
        related_entities=["Ana", "Lisbon"],
        source_links=[t1.id],
    )
    script = m.write(gesture=f"The user pasted {SCRIPT}", source_links=[t3.id])
    fact = add_fact(app.profile, "lives in Lisbon", turn_ids=(t1.id,))
    return {"turns": [t1.id, t2.id, t3.id], "lisbon": lisbon.id, "script": script.id, "fact": fact}  # fmt: skip


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Tideline]:
    settings = Settings.load(overrides={"agent_name": "hui", "embedder": "none"})
    app = Tideline(settings, clock=ManualClock(SEEDED_AT))  # "now" is the seeded data's time
    yield app
    app.close()


@pytest.fixture
def seeded(agent: Tideline) -> dict[str, Any]:
    return seed(agent)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for the module (tests.web.chromium: skipped without it)."""
    with chromium() as launched:
        yield launched


def client_for(app: Tideline) -> TestClient:
    """The guarded app in process, as a loopback client (no cookies unless a test sets them)."""
    served = http_app(app, endpoints=(MCP_ENDPOINT,))  # what `serve` runs: MCP beside the panel
    return TestClient(served, base_url=BASE, raise_server_exceptions=False)


@pytest.fixture
def client(agent: Tideline) -> Iterator[TestClient]:
    with client_for(agent) as c:
        yield c


def t0_of(client: TestClient) -> str:
    """The identity block's T0 (the snapshot) as `POST /api/context` returns it."""
    # once a page set the panel's cookies, the API asks for the page's CSRF token
    headers = {"x-csrf-token": csrf_of(client)} if client.cookies.get("tideline_csrf") else {}
    answer = client.post("/api/context", json={}, headers=headers)
    assert answer.status_code == 200, answer.text
    block = answer.json()["blocks"][0]
    [t0] = [s for s in block["sections"] if s["tier"] == "T0"]
    return "\n".join(i["text"] for p in t0["parts"] for i in p["items"])


def csrf_of(client: TestClient | httpx.Client, path: str = "/") -> str:
    """Open a page (so the CSRF nonce cookie is set): the CSRF token its forms carry."""
    page = client.get(path)
    assert page.status_code == 200, page.text
    found = re.search(r'<meta name="csrf-token" content="([^"]+)">', page.text)
    assert found, page.text
    return found.group(1)
