"""Safe by default: the token (header or the panel's login cookie), Origin and Host checks on
every path, CSRF on the panel's forms and on cookie-carrying API writes, escaped output."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.profile.conftest import add_fact, rebuild_snapshot
from tests.web.conftest import BASE, SCRIPT, TOKEN, client_for, csrf_of, seed, t0_of
from tideline.app import Tideline
from tideline.clock import ManualClock
from tideline.config import Settings
from tideline.errors import ConfigError, InvalidInput
from tideline.serve._throttle import FREE
from tideline.web import http_app
from tideline.web._session import PanelSessions

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
    assert "Max-Age=43200" in done.headers["set-cookie"]  # panel_session_hours: 12
    assert client.get("/profile", headers=HTML).status_code == 200
    # with the cookie, an API write from the browser also needs the CSRF header: the token of
    # this session (the login form's, from before it, no longer passes)
    body = {"session": "s", "role": "user", "text": "from the panel"}
    assert client.post("/api/turns", json=body).status_code == 403
    assert client.post("/api/turns", json=body, headers={"x-csrf-token": csrf}).status_code == 403
    mine = {"x-csrf-token": csrf_of(client, "/profile")}
    assert client.post("/api/turns", json=body, headers=mine).status_code == 200


def test_an_attacker_chosen_csrf_cookie_is_refused(client: TestClient) -> None:
    """A page on another localhost port can set this host's cookies: its own nonce, with the
    same value in the form, starts nothing (it was #21's: a sleep started)."""
    client.cookies.set("tideline_csrf", "chosen-by-the-attacker")
    refused = client.post("/runs/sleep", data={"csrf": "chosen-by-the-attacker"})
    assert refused.status_code == 403 and "CSRF" in refused.text
    assert client.get("/api/runs").json()["started"] == []
    for forged in ("", csrf_of(client) + "x", "chosen-by-the-attacker"):
        assert client.post("/runs/sleep", data={"csrf": forged}).status_code in (403, 422)
    assert client.get("/api/runs").json()["started"] == []


def login(client: TestClient) -> str:
    """Log `client` in with TOKEN; the session cookie."""
    done = client.post("/login", data={"csrf": csrf_of(client, "/login"), "token": TOKEN})
    assert done.status_code == 200 and done.url.path == "/", done.text
    return str(client.cookies["tideline_session"])


def test_a_csrf_token_is_bound_to_its_session(locked: Any) -> None:
    client, ids = locked
    login(client)
    other = TestClient(client.app, base_url=client.base_url)  # another browser, same server
    login(other)
    theirs = csrf_of(other, "/profile")
    fact = ids["fact"]
    stolen = client.post(f"/facts/{fact}/close", data={"csrf": theirs})
    assert stolen.status_code == 403  # a token from another login does not pass
    client.cookies.set("tideline_csrf", other.cookies["tideline_csrf"])  # not even with its nonce
    assert client.post(f"/facts/{fact}/close", data={"csrf": theirs}).status_code == 403
    assert client.post(f"/facts/{fact}/close", data={"csrf": csrf_of(client, "/profile")}).status_code == 200  # fmt: skip


def test_the_session_is_this_servers_and_ends(tmp_path: Any) -> None:
    app = Tideline(Settings.load(overrides={"token": TOKEN, "embedder": "none"}))
    now = [1_800_000_000.0]
    sessions = PanelSessions(hours=1, keys={("agent", None)}, clock=lambda: now[0])
    try:
        with TestClient(http_app(app, sessions=sessions), base_url=BASE) as client:
            cookie = login(client)
            assert client.get("/profile", headers=HTML).status_code == 200
            payload, mac = cookie.split(".")
            edited = base64.urlsafe_b64encode(
                base64.urlsafe_b64decode(payload + "==").replace(b'"agent"', b'"other"')
            ).rstrip(b"=")
            old = hmac.new(TOKEN.encode(), b"tideline panel cookie", hashlib.sha256).hexdigest()
            with TestClient(http_app(app), base_url=BASE) as restarted:  # a new secret
                for value in (cookie, old, f"{edited.decode()}.{mac}", cookie + "x", "a.b.c"):
                    restarted.cookies.set("tideline_session", value)
                    shut = restarted.get("/profile", headers=HTML, follow_redirects=False)
                    assert shut.status_code == 303 and shut.headers["location"] == "/login"
                    assert restarted.get("/api/stats").status_code == 401
            now[0] += 3599
            assert client.get("/profile", headers=HTML).status_code == 200
            now[0] += 2  # over: the login form again
            shut = client.get("/profile", headers=HTML, follow_redirects=False)
            assert shut.status_code == 303 and shut.headers["location"] == "/login"
    finally:
        app.close()


def test_log_out(locked: Any) -> None:
    client, _ = locked
    login(client)
    page = client.get("/profile")
    assert 'action="/logout"' in page.text
    done = client.post("/logout", data={"csrf": csrf_of(client, "/profile")}, follow_redirects=False)  # fmt: skip
    assert done.status_code == 303 and done.headers["location"] == "/login"
    assert "tideline_session" not in client.cookies
    assert client.get("/profile", headers=HTML, follow_redirects=False).status_code == 303


@pytest.mark.parametrize("hours", [0, -1, 10**6])
def test_a_session_length_that_cannot_work_is_refused(hours: float) -> None:
    app = Tideline(Settings.load(overrides={"panel_session_hours": hours, "embedder": "none"}))
    try:
        with pytest.raises(ConfigError, match="panel_session_hours"):
            http_app(app)
    finally:
        app.close()


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


PRIVATE_PATHS = [
    "/", "/profile", "/sessions", "/library", "/runs", "/pictures", "/search?q=Lisbon",
    "/api/search?query=Lisbon", "/api/stats", "/api/openapi.json", "/no-such-page",
]  # fmt: skip


def test_private_pages_are_neither_cached_nor_framed(client: TestClient, seeded: Any) -> None:
    """A page on another localhost port (the same site: SameSite=Strict lets the cookie go)
    could frame the panel, and a cached page of memories outlives the session (issue 31): every
    page and API answer, errors included, says no-store and denies framing both ways."""
    for path in PRIVATE_PATHS:
        answer = client.get(path, headers=HTML if not path.startswith("/api") else {})
        assert answer.headers.get("cache-control") == "no-store", path
        assert answer.headers.get("x-frame-options") == "DENY", path
        assert answer.headers.get("content-security-policy") == "frame-ancestors 'none'", path
    sheet = client.get("/static/panel.css")
    assert sheet.status_code == 200 and sheet.headers.get("x-frame-options") == "DENY"
    assert "no-store" not in sheet.headers.get("cache-control", "")  # shows no memory


def test_repeated_wrong_tokens_are_slowed_and_the_right_one_never_is() -> None:
    """300 wrong tokens took 0.5 s, each a 401 (issue 31). After FREE wrong bearer or login
    tokens within a minute a client is answered 429 with Retry-After; the right token works all
    along (a lockout would let any local program shut the user out); the window passes on the
    clock seam, no sleep."""
    clock = ManualClock(dt.datetime(2026, 5, 3, 12, 0, tzinfo=dt.UTC))
    app = Tideline(Settings.load(overrides={"token": TOKEN, "embedder": "none"}), clock=clock)
    right = {"authorization": f"Bearer {TOKEN}"}
    try:
        with client_for(app) as client:
            codes = [
                client.get("/api/stats", headers={"authorization": f"Bearer guess{n}"})
                for n in range(FREE + 3)
            ]
            assert [c.status_code for c in codes] == [401] * FREE + [429] * 3
            assert codes[-1].headers["retry-after"] == "60" and "wait 60 s" in codes[-1].text
            assert client.get("/api/stats", headers=right).status_code == 200  # never locked out
            clock.advance(seconds=30)
            late = client.get("/api/stats", headers={"authorization": "Bearer guess"})
            assert late.status_code == 429 and late.headers["retry-after"] == "30"
            clock.advance(seconds=61)
            assert (
                client.get("/api/stats", headers={"authorization": "Bearer x"}).status_code == 401
            )
            # the login form counts its own wrong tokens the same way
            csrf = csrf_of(client, "/login")
            tries = [client.post("/login", data={"csrf": csrf, "token": "g"}) for _ in range(FREE)]
            assert tries[-1].status_code == 429 and tries[-1].headers["retry-after"]
            assert "wait" in tries[-1].text and "not the token" in tries[-1].text
            done = client.post(
                "/login", data={"csrf": csrf, "token": TOKEN}, follow_redirects=False
            )
            assert done.status_code == 303 and "tideline_session" in client.cookies
    finally:
        app.close()
