"""Safe by default: the token (header or the panel's login cookie), Origin and Host checks on
every path, CSRF on the panel's forms and on cookie-carrying API writes, escaped output."""

from __future__ import annotations

import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.profile.conftest import add_fact, rebuild_snapshot
from tests.web.conftest import SCRIPT, TOKEN, client_for, csrf_of, seed, t0_of
from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import InvalidInput
from tideline.web import http_app

HTML = {"accept": "text/html"}


@pytest.fixture
def locked() -> Any:
    app = Tideline(Settings.load(overrides={"token": TOKEN, "embedder": "none"}))
    ids = seed(app)
    with client_for(app) as client:
        yield client, ids
    app.close()


def test_no_read_or_write_without_the_token(locked: Any) -> None:
    client, _ = locked
    assert client.get("/api/stats").status_code == 401
    refused = client.post("/api/turns", json={"session": "s", "role": "user", "text": "x"})
    assert refused.status_code == 401 and "bearer token" in refused.json()["error"]
    bearer = {"authorization": f"Bearer {TOKEN}"}
    assert client.get("/api/stats", headers=bearer).json()["turns"] == 3
    wrong = client.get("/api/stats", headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert (
        client.post(
            "/api/turns", json={"session": "s", "role": "user", "text": "x"}, headers=bearer
        ).status_code
        == 200
    )
    # the MCP endpoint on the same port has the same rule
    assert client.post("/mcp", json={}).status_code == 401
    # a browser is sent to the login form; its stylesheet needs no token
    page = client.get("/profile", headers=HTML, follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"] == "/login"
    assert client.get("/static/panel.css").status_code == 200


def test_the_login_form_sets_a_cookie_that_opens_the_panel(locked: Any) -> None:
    client, _ = locked
    csrf = csrf_of(client, "/login")
    failed = client.post("/login", data={"csrf": csrf, "token": "guess"})
    assert failed.status_code == 401 and "not the token" in failed.text
    assert "tideline_session" not in client.cookies
    done = client.post("/login", data={"csrf": csrf, "token": TOKEN}, follow_redirects=False)
    assert done.status_code == 303
    cookie = client.cookies["tideline_session"]
    assert TOKEN not in cookie  # a MAC of the token, not the token
    assert "set-cookie" in done.headers and "HttpOnly" in done.headers["set-cookie"]
    assert "SameSite=strict" in done.headers["set-cookie"]
    assert client.get("/profile", headers=HTML).status_code == 200
    # with the cookie, an API write from the browser also needs the CSRF header
    body = {"session": "s", "role": "user", "text": "from the panel"}
    assert client.post("/api/turns", json=body).status_code == 403
    assert client.post("/api/turns", json=body, headers={"x-csrf-token": csrf}).status_code == 200


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "null", "https://127.0.0.1.evil.example"]
)
def test_a_foreign_origin_is_refused_everywhere(client: TestClient, origin: str) -> None:
    for method, path in (
        ("GET", "/"),
        ("GET", "/api/stats"),
        ("POST", "/api/sleep"),
        ("POST", "/mcp"),
    ):
        response = client.request(method, path, headers={"origin": origin}, json={})
        assert response.status_code == 403, (method, path)
    assert client.get("/api/stats", headers={"origin": "http://localhost:8765"}).status_code == 200


def test_a_foreign_host_is_refused(client: TestClient) -> None:
    response = client.get("/", headers={"host": "rebind.example:8765"})
    assert response.status_code == 421


def test_a_public_bind_needs_a_token(agent: Tideline) -> None:
    with pytest.raises(InvalidInput, match="without a token"):
        http_app(agent, host="0.0.0.0")


def test_panel_forms_need_the_csrf_token(
    client: TestClient, seeded: dict[str, Any], agent: Tideline
) -> None:
    fact = seeded["fact"]
    missing = client.post(f"/facts/{fact}/reject", data={"why": "wrong"})
    assert missing.status_code == 422
    csrf = csrf_of(client, "/profile")
    forged = client.post(f"/facts/{fact}/reject", data={"why": "wrong", "csrf": "forged"})
    assert forged.status_code == 403 and "CSRF" in forged.text
    client.cookies.clear()  # the other site's request: no cookie, a stolen-looking field
    assert client.post(f"/facts/{fact}/close", data={"csrf": csrf}).status_code == 403
    assert client.post("/runs/sleep", data={"csrf": csrf}).status_code == 403
    assert agent.profile.fact(fact).status == "suspected"  # nothing changed


def test_mark_wrong_and_close_from_the_panel(
    client: TestClient, seeded: dict[str, Any], agent: Tideline
) -> None:
    fact = seeded["fact"]
    second = add_fact(agent.profile, "works as a baker", category="job")
    rebuild_snapshot(agent.profile)
    assert "lives in Lisbon" in t0_of(client)
    csrf = csrf_of(client, "/profile")
    done = client.post(
        f"/facts/{fact}/reject",
        data={"why": "she never lived there", "csrf": csrf, "then": "//evil.example/x"},
        follow_redirects=False,
    )
    assert done.status_code == 303 and done.headers["location"] == f"/#fact-{fact}"
    assert agent.profile.fact(fact).status == "rejected"
    page = client.get("/profile").text
    card = re.search(rf'<article class="fact status-rejected" id="fact-{fact}"', page)
    assert card and "she never lived there" in page  # greyed and kept, with the reason
    assert f'/facts/{fact}/reject"' not in page  # no buttons on a final fact
    assert client.get(f"/facts/{fact}").status_code == 200
    assert "lives in Lisbon" not in t0_of(client)  # the identity block changed at once
    closed = client.post(f"/facts/{second}/close", data={"csrf": csrf}, follow_redirects=False)
    assert closed.status_code == 303 and "works as a baker" not in t0_of(client)


def test_stored_markup_renders_as_text(client: TestClient, seeded: dict[str, Any]) -> None:
    pages = [
        client.get("/", params={"q": "script alert stored"}).text,
        client.get(f"/trace/{seeded['script']}").text,
        client.get("/sessions/notes").text,
        client.get("/", params={"q": SCRIPT}).text,  # the query itself is echoed escaped
    ]
    for html in pages:
        assert SCRIPT not in html
        assert "&lt;script&gt;alert(" in html


def test_evidence_links_to_its_turn_in_context(client: TestClient, seeded: dict[str, Any]) -> None:
    turn = seeded["turns"][0]
    assert f'href="/turns/{turn}"' in client.get("/profile").text
    shown = client.get(f"/turns/{turn}")
    assert shown.url.path == "/sessions/trip" and f'id="turn-{turn}"' in shown.text
    assert client.get("/turns/9999").status_code == 404
