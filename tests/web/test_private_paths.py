"""Errors sent over HTTP never show the server's file system paths (#21): whoever calls the
REST API or MCP over HTTP may hold only a token, and learns nothing of where the server keeps
its home, its library or its cache. Local callers (the CLI, MCP over stdio) still see them."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
from mcp import Client
from starlette.testclient import TestClient

from tests import damage
from tests.library.notes import make_collection
from tests.mcp.conftest import error_text
from tideline.app import Tideline
from tideline.config import Settings
from tideline.mcp import build_server
from tideline.web import http_app


def _agent(tmp_path: Path) -> tuple[Tideline, Path]:
    root = tmp_path / "srv-notes"
    make_collection(root, "log", "A running log", {"day.md": "# Day\n"})
    return Tideline(Settings.load(overrides={"embedder": "none", "memo_root": str(root)})), root


def _leaks(text: str, *paths: Path) -> list[str]:
    return [str(p) for p in paths if str(p) in text] + (["/etc"] if "to '/etc" in text else [])


def test_the_rest_api_hides_the_server_paths_in_its_errors(tmp_path: Path) -> None:
    app, root = _agent(tmp_path)
    try:
        with TestClient(http_app(app), base_url="http://127.0.0.1:8765") as http:
            escape = http.get("/api/library/read", params={"path": "../../../../etc/passwd"})
            missing = http.get("/api/library/read", params={"path": "log/nope.md"})
            outside = http.post(
                "/api/library/notes", json={"path": "/etc/x.md", "text": "t", "append": True}
            )
    finally:
        app.close()
    for answer in (escape, missing, outside):
        assert answer.status_code in (400, 404), answer.text
        said = answer.json()["error"]
        assert _leaks(said, root, tmp_path) == [], said
    assert "<library>" in missing.json()["error"] and "<server path>" in escape.json()["error"]


def test_a_damaged_database_is_named_without_its_folder(tmp_path: Path, settings: Settings) -> None:
    seed = Tideline(settings)
    seed.memory.write(gesture="before the damage")
    seed.close()
    path = settings.db_path
    shutil.copyfile(path, tmp_path / "spare.db")
    damage.zeroed_header(path)
    app = Tideline(settings)
    try:
        with TestClient(http_app(app), base_url="http://127.0.0.1:8765") as http:
            answer = http.get("/api/stats")
    finally:
        app.close()
    said = answer.json()["error"]
    assert answer.status_code == 503 and said.startswith("<home>/memory.db "), said
    assert _leaks(said, settings.home) == []


def test_mcp_over_http_hides_them_and_stdio_shows_them(tmp_path: Path) -> None:
    app, root = _agent(tmp_path)
    args = {"path": "log/nope.md"}

    async def said(remote: bool) -> str:
        async with Client(build_server(app, remote=remote)) as client:
            return error_text(await client.call_tool("memo_read", args))

    try:
        remote, local = anyio.run(said, True), anyio.run(said, False)
    finally:
        app.close()
    assert _leaks(remote, root, tmp_path) == [] and "<library>" in remote, remote
    assert str(root) in local  # the person at the server's own terminal sees where


def test_the_library_page_names_its_root_only_to_the_owner(tmp_path: Path) -> None:
    """A token holder sees the collections, not the folder the server keeps them in; the owner
    at the keyboard (no token) sees the folder, which tells them which library is open."""
    _, root = _agent(tmp_path)
    pages = {}
    for token in ("", "t" * 32):
        app = Tideline(
            Settings.load(overrides={"embedder": "none", "memo_root": str(root), "token": token})
        )
        try:
            with TestClient(http_app(app), base_url="http://127.0.0.1:8765") as http:
                answer = http.get("/library", headers={"authorization": f"Bearer {token}"})
        finally:
            app.close()
        assert answer.status_code == 200, answer.text
        pages[token] = answer.text.split("<h1>")[1].split("</h1>")[0]
    assert str(root) in pages[""]
    shared = pages["t" * 32]
    assert "the library: log" in shared and _leaks(shared, root, tmp_path) == [], shared
