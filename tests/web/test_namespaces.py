"""One `tideline serve --transport http` for two agents: each token opens its own namespace.

The agents write the same words; a search with one token never returns the other's memories —
through the REST API, through MCP (the SDK's client over streamable HTTP), and in the panel,
whose login cookie opens the namespace of the token it was given for. On both engines: on SQLite
each namespace is the agent's own file, on PostgreSQL its schema. The library too: each
namespace has the root its tokens file entry names (or none), never the server's MEMO_ROOT.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from tests.mcp.conftest import HttpServer, payload, server_env, start_http, stop
from tests.web.conftest import csrf_of
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings

pytestmark = pytest.mark.engines

ANA, BO, HUI = (secrets.token_urlsafe(32) for _ in range(3))
WORDS = {
    "ana": "The heron nests behind the red boat shed",
    "bo": "A heron stole fish from the boat",
}


def tokens_file(tmp_path: Path, user: str, bo_library: str | None = "notes/bo") -> Path:
    """ANA opens ana (library notes/ana, relative to the file), BO opens bo (`bo_library`)."""
    path = tmp_path / "tokens.toml"
    bo = f'library = "{bo_library}"\n' if bo_library else ""
    path.write_text(
        f'[[token]]\ntoken = "{ANA}"\nagent = "ana"\nuser = "{user}"\nlibrary = "notes/ana"\n\n'
        f'[[token]]\ntoken = "{BO}"\nagent = "bo"\nuser = "{user}"\n{bo}'
    )
    return path


def collection(root: Path) -> Path:
    """A collection `work` under `root`, with nothing in it yet."""
    (root / "work").mkdir(parents=True)
    (root / "work" / "_meta.yaml").write_text("name: work\ndescription: work notes\n")
    return root


@pytest.fixture
def two_agents(tmp_path: Path, engine_env: str) -> Any:
    """A server whose tokens file gives ANA the agent ana and BO the agent bo (one user name
    of this test's own, so namespaces on the shared PostgreSQL do not meet other tests'), each
    with a library of its own; HUI, its TIDELINE_TOKEN, opens its own namespace (the agent
    hui), whose library is MEMO_ROOT."""
    path = tokens_file(tmp_path, f"u{secrets.token_hex(4)}")
    for name in ("ana", "bo", "hui"):
        collection(tmp_path / "notes" / name)
    server = start_http(
        tmp_path,
        token=HUI,
        TIDELINE_TOKENS_FILE=str(path),
        TIDELINE_EMBEDDER="none",
        MEMO_ROOT=str(tmp_path / "notes" / "hui"),
    )
    yield server
    stop(server.proc)


def api(server: HttpServer, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{server.port}",
        headers={"authorization": f"Bearer {token}"},
        timeout=60,
    )


def remember(server: HttpServer, token: str, text: str) -> int:
    with api(server, token) as http:
        turn = http.post("/api/turns", json={"session": "s", "role": "user", "text": text})
        assert turn.status_code == 200, turn.text
        note = http.post("/api/narratives", json={"gesture": text, "source_links": [turn.json()["id"]]})  # fmt: skip
        assert note.status_code == 201, note.text
        return int(note.json()["id"])


def gestures(hits: list[dict[str, Any]]) -> set[str]:
    return {h["text"] for h in hits if h["type"] == "narrative"}


async def over_mcp(server: HttpServer, token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    async with (
        httpx2.AsyncClient(
            headers={"authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60)
        ) as http,
        Client(streamable_http_client(server.url, http_client=http)) as c,
    ):
        found = payload(await c.call_tool("memory_search", {"query": "heron boat"}))
        return found, payload(await c.call_tool("memory_stats", {}))


def test_a_token_sees_only_its_own_namespace(two_agents: HttpServer) -> None:
    server = two_agents
    remember(server, ANA, WORDS["ana"])
    remember(server, BO, WORDS["bo"])

    for token, mine, theirs in ((ANA, "ana", "bo"), (BO, "bo", "ana")):
        with api(server, token) as http:
            hits = http.get("/api/search", params={"query": "heron boat"}).json()["hits"]
            assert gestures(hits) == {WORDS[mine]}, (mine, hits)
            turns = http.get("/api/search", params={"query": "heron", "include_turns": "true"})
            assert WORDS[theirs] not in turns.text
        found, stats = anyio.run(over_mcp, server, token)
        assert gestures(found["hits"]) == {WORDS[mine]}
        assert (stats["turns"], stats["narratives"]) == (1, 1)

    with api(server, HUI) as http:  # the server's own namespace: nothing of theirs
        assert http.get("/api/stats").json()["narratives"] == 0
    with api(server, "not-a-token-" + secrets.token_urlsafe(16)) as http:
        assert http.get("/api/search", params={"query": "heron"}).status_code == 401
        assert http.post("/mcp", json={}).status_code == 401
    assert "Traceback" not in server.stderr()


def test_the_panel_cookie_opens_its_own_namespace(two_agents: HttpServer) -> None:
    server = two_agents
    remember(server, ANA, WORDS["ana"])
    remember(server, BO, WORDS["bo"])
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60) as browser:
        assert browser.get("/", headers={"accept": "text/html"}).status_code == 303
        done = browser.post("/login", data={"csrf": csrf_of(browser, "/login"), "token": BO})
        assert done.status_code == 303, done.text
        page = browser.get("/", params={"q": "heron boat"})
        assert page.status_code == 200
        assert WORDS["bo"] in page.text and WORDS["ana"] not in page.text
        assert page.text.split("</title>")[0].endswith("· bo")  # the page names its agent
        bo_cookie = browser.cookies["tideline_session"]

        browser.post("/login", data={"csrf": csrf_of(browser, "/login"), "token": ANA})
        page = browser.get("/", params={"q": "heron boat"})
        assert WORDS["ana"] in page.text and WORDS["bo"] not in page.text
        assert browser.cookies["tideline_session"] != bo_cookie

        refused = browser.post("/login", data={"csrf": csrf_of(browser), "token": "guess"})
        assert refused.status_code == 401


NOTES = {"ana": "Ana: heron count seven", "bo": "Bo: heron count two"}


async def notes_over_mcp(server: HttpServer, token: str, text: str) -> dict[str, Any]:
    """Write `text` into work/mcp.md with memo_write, then what memo_search and memo_read see."""
    async with (
        httpx2.AsyncClient(
            headers={"authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60)
        ) as http,
        Client(streamable_http_client(server.url, http_client=http)) as c,
    ):
        payload(await c.call_tool("memo_write", {"path": "work/mcp.md", "text": text}))
        found = payload(await c.call_tool("memo_search", {"query": "heron count", "path": "*"}))
        read = await c.call_tool("memo_read", {"path": "work/api.md"})
        return {"hits": found["hits"], "read": read}


def test_each_namespace_has_its_own_library(two_agents: HttpServer, tmp_path: Path) -> None:
    server = two_agents
    for token, who in ((ANA, "ana"), (BO, "bo")):  # each writes the same path, its own words
        with api(server, token) as http:
            done = http.post("/api/library/notes", json={"path": "work/api.md", "text": NOTES[who]})  # fmt: skip
            assert done.status_code == 201, done.text
    for who in ("ana", "bo"):  # on disk: in that namespace's root, nowhere else
        assert (tmp_path / "notes" / who / "work" / "api.md").read_text().strip() == NOTES[who]
    assert not (tmp_path / "notes" / "hui" / "work" / "api.md").exists()

    for token, mine, theirs in ((ANA, "ana", "bo"), (BO, "bo", "ana")):
        with api(server, token) as http:
            hits = http.get("/api/library/search", params={"query": "heron count", "path": "*"})
            assert [h["path"] for h in hits.json()["hits"]] == ["work/api.md"], hits.text
            assert NOTES[mine] in hits.text and NOTES[theirs] not in hits.text
            read = http.get("/api/library/read", params={"path": "work/api.md"}).json()
            assert NOTES[mine] in read["text"] and NOTES[theirs] not in read["text"]
            status = http.get("/api/library/status").json()
            assert Path(status["root"]) == tmp_path / "notes" / mine
        mcp = anyio.run(notes_over_mcp, server, token, f"{mine} wrote this over MCP: heron count")
        assert {h["path"] for h in mcp["hits"]} == {"work/api.md", "work/mcp.md"}
        assert f"{theirs} wrote" not in str(mcp["hits"]) and NOTES[theirs] not in str(mcp["hits"])
        assert NOTES[mine] in payload(mcp["read"])["text"]
    for who in ("ana", "bo"):
        assert f"{who} wrote" in (tmp_path / "notes" / who / "work" / "mcp.md").read_text()

    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60) as browser:
        browser.post("/login", data={"csrf": csrf_of(browser, "/login"), "token": BO})
        for path, params in (("/library", {"q": "heron count"}), ("/", {"q": "heron count"})):
            page = browser.get(path, params=params)
            assert page.status_code == 200 and NOTES["bo"] in page.text, page.text
            assert NOTES["ana"] not in page.text
        note = browser.get("/library/note", params={"path": "work/api.md"})
        assert NOTES["bo"] in note.text and NOTES["ana"] not in note.text

    with api(server, HUI) as http:  # the server's own namespace: MEMO_ROOT, nothing of theirs
        hits = http.get("/api/library/search", params={"query": "heron count", "path": "*"})
        assert hits.status_code == 200 and hits.json()["hits"] == [], hits.text
    assert "Traceback" not in server.stderr()


def test_a_namespace_without_a_library_has_none(tmp_path: Path) -> None:
    """bo's entry names no library: bo's library calls are refused, MEMO_ROOT stays unseen."""
    root = collection(tmp_path / "notes" / "hui")
    (root / "work" / "secret.md").write_text("the server's own heron note\n")
    server = start_http(
        tmp_path,
        TIDELINE_TOKENS_FILE=str(tokens_file(tmp_path, "kai", bo_library=None)),
        TIDELINE_EMBEDDER="none",
        MEMO_ROOT=str(root),
    )
    try:
        with api(server, BO) as http:
            for method, path, args in (
                ("GET", "/api/library/search", {"params": {"query": "heron", "path": "*"}}),
                ("GET", "/api/library/read", {"params": {"path": "work/secret.md"}}),
                ("POST", "/api/library/notes", {"json": {"path": "work/x.md", "text": "x"}}),
            ):
                refused = http.request(method, path, **args)
                assert refused.status_code == 400, refused.text
                assert "bo has no library root" in refused.json()["error"]
                assert "heron" not in refused.text
            page = http.get("/library")
            assert page.status_code == 200 and "No library" in page.text
    finally:
        stop(server.proc)
    assert not (root / "work" / "x.md").exists()


@pytest.mark.parametrize(
    ("libraries", "message"),
    [
        (("notes/ana", "notes/ana/bo"), "overlaps the library of namespace ana:kai"),
        (("notes/ana", "notes"), "overlaps the library of namespace ana:kai"),
        (("notes/ana", "hui/bo"), "overlaps MEMO_ROOT"),
    ],
)
def test_libraries_that_overlap_are_refused(
    tmp_path: Path, libraries: tuple[str, str], message: str
) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(
        f'[[token]]\ntoken = "{ANA}"\nagent = "ana"\nuser = "kai"\nlibrary = "{libraries[0]}"\n'
        f'[[token]]\ntoken = "{BO}"\nagent = "bo"\nlibrary = "{libraries[1]}"\n'
    )
    done = CliRunner().invoke(
        cli,
        ["serve", "--transport", "http"],
        env={"TIDELINE_TOKENS_FILE": str(path), "MEMO_ROOT": str(tmp_path / "hui")},
    )
    assert done.exit_code == 2
    assert message in done.stderr and "entry 2" in done.stderr, done.stderr


def test_each_namespace_keeps_its_own_database(tmp_path: Path) -> None:
    """On SQLite each agent's memories are in a file of its own beside the server's home."""
    server = start_http(
        tmp_path,
        TIDELINE_TOKENS_FILE=str(tokens_file(tmp_path, "kai")),
        TIDELINE_EMBEDDER="none",
    )
    try:
        remember(server, ANA, WORDS["ana"])
    finally:
        stop(server.proc)
    home = Path(server_env(tmp_path)["TIDELINE_HOME"])
    opened = Tideline(Settings.load(overrides={"home": str(home.parent / "ana" / "users" / "kai")}))
    try:
        assert opened.memory.stats()["narratives"] == 1
    finally:
        opened.close()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("token = 'x'", "needs [[token]] entries"),
        ("[[token]]\nagent = 'ana'\n", "'token' must be a string"),
        ("[[token]]\ntoken = 'abc'\nagent = 'a/b'\n", "cannot name a PostgreSQL namespace"),
        ("[[token]]\ntoken = 'abc'\nagent = 'ana'\nrole = 'x'\n", "unknown key(s) ['role']"),
        ("[[token]]\ntoken = 'abc'\nagent = 'ana'\nlibrary = 3\n", "'library', if given"),
        (
            "[[token]]\ntoken = 'abc'\nagent = 'a'\nlibrary = 'x'\n"
            "[[token]]\ntoken = 'abd'\nagent = 'a'\nlibrary = 'y'\n",
            "entry 2 gives its namespace another library",
        ),
        ("[[token]\n", "cannot be read"),
        (
            "[[token]]\ntoken = 'abc'\nagent = 'a'\n[[token]]\ntoken = 'abc'\nagent = 'b'\n",
            "entry 2 repeats a token",
        ),
    ],
)
def test_a_bad_tokens_file_is_one_line_at_start_up(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "tokens.toml"
    path.write_text(text)
    done = CliRunner().invoke(
        cli, ["serve", "--transport", "http"], env={"TIDELINE_TOKENS_FILE": str(path)}
    )
    assert done.exit_code == 2  # bad input, as a token that cannot work
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(path) in lines[0], done.stderr
