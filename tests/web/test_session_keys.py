"""Session keys hold `/` (every import: `openai/chat`, `locomo/conv-26/session_1`), spaces and
any script: every link the panel draws to a session opens it, in the panel and the API."""

from __future__ import annotations

import html
import re
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from tideline.app import Tideline

KEYS = [
    "openai/chat",
    "locomo/conv-26/session_1",
    "a chat with spaces",
    "Москва/день 1",
    "東京/会議 2",
    "trailing/",
    "/leading",
    "a?b#c&d=e",
    "100% sure",
    "..",
    ".",
    "x/../y",
    "turns",
    "s/turns",
]


@pytest.fixture
def keyed(agent: Tideline) -> dict[str, int]:
    """One turn in each session of KEYS, and a memory linking to all of them: key → turn id."""
    ids = {}
    for n, key in enumerate(KEYS):
        turn = agent.memory.sync_turn(key, "user", f"harbour words number {n}", timestamp=f"2026-05-{n + 1:02d}T10:00:00Z")  # fmt: skip
        ids[key] = turn.id
    agent.memory.write(gesture="harbour words everywhere", source_links=list(ids.values()))
    return ids


def links(page: str, prefix: str) -> list[str]:
    """The page's links under `prefix` (the menu's own `/sessions` left out)."""
    found = [html.unescape(h) for h in re.findall(r'href="([^"]+)"', page)]
    return [h for h in found if h.startswith(prefix) and h != "/sessions"]


def opens(client: TestClient, url: str, key: str, turn: int) -> None:
    page = client.get(url)
    assert page.status_code == 200, (url, page.text[:300])
    assert f'id="turn-{turn}"' in page.text and html.escape(key) in page.text, url


def test_every_session_link_opens_its_session(client: TestClient, keyed: dict[str, int]) -> None:
    drawn = []
    for day in (f"2026-05-{n + 1:02d}" for n in range(len(KEYS))):
        drawn += links(client.get("/sessions", params={"day": day}).text, "/sessions")
    drawn = [u for u in drawn if "day=" not in u]
    assert len(drawn) == len(KEYS)
    search = client.get("/", params={"q": "harbour words"}).text
    narrative = re.search(r'href="/trace/(\d+)"', search)
    assert narrative
    traced = links(client.get(f"/trace/{narrative.group(1)}").text, "/sessions")
    hits = [u for u in links(search, "/sessions") if "turn=" in u]
    assert len(traced) == len(KEYS) and len(hits) >= 1
    for url in drawn + traced + hits:
        key = next(k for k in KEYS if url.startswith(_url(k)))
        opens(client, url, key, keyed[key])
    for key, turn in keyed.items():  # a fact's evidence: /turns/<id> goes to its session
        opens(client, f"/turns/{turn}", key, turn)


def _url(key: str) -> str:
    return f"/sessions?key={quote(key, safe='')}" if key in (".", "..") else f"/sessions/{quote(key, safe='')}"  # fmt: skip


def test_the_paths_people_type(client: TestClient, keyed: dict[str, int]) -> None:
    """The issue's own reproduction, raw `/` and %2F alike, in the panel and the API."""
    opens(client, "/sessions/openai/chat", "openai/chat", keyed["openai/chat"])
    opens(client, "/sessions/locomo/conv-26/session_1", "locomo/conv-26/session_1", keyed["locomo/conv-26/session_1"])  # fmt: skip
    for path in ("/api/sessions/openai%2Fchat/turns", "/api/sessions/openai/chat/turns"):
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text)
        assert answer.json()["session"] == "openai/chat"
        assert [t["id"] for t in answer.json()["turns"]] == [keyed["openai/chat"]]
    for key in ("s/turns", "turns", "Москва/день 1", "a?b#c&d=e"):
        answer = client.get(f"/api/sessions/{quote(key, safe='')}/turns")
        assert answer.status_code == 200 and answer.json()["session"] == key, key
    assert client.get("/api/sessions/nope/nothing/turns").status_code == 404
    assert client.get("/sessions/", follow_redirects=False).headers["location"] == "/sessions"
