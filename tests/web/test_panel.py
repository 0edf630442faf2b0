"""The panel's pages in process: each renders over a seeded agent; the library note is rendered
from markdown with the hit highlighted and its raw HTML shown as text."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from tests.helpers import wait_until
from tests.library.corpus import build
from tests.web.conftest import client_for, csrf_of
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings


@pytest.mark.parametrize(
    "path",
    ["/", "/?q=Lisbon&mode=lex", "/trace/{lisbon}", "/sessions", "/sessions?day=2026-05-02",
     "/sessions/trip", "/profile", "/profile?status=live&subject=user", "/facts/{fact}",
     "/pictures?since=2026-01-01", "/runs", "/library", "/login"],
)  # fmt: skip
def test_every_page_renders(client: TestClient, seeded: dict[str, Any], path: str) -> None:
    page = client.get(path.format(**seeded))
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert 'href="/static/panel.css"' in page.text and "http://" not in page.text.split("<main>")[0]


def test_search_shows_each_hit_with_its_score_parts(
    client: TestClient, seeded: dict[str, Any]
) -> None:
    html = client.get("/", params={"q": "Lisbon", "mode": "lex"}).text
    assert f'href="/trace/{seeded["lisbon"]}"' in html and "bm25 #1" in html
    assert "no library here" in html


def test_a_bad_page_argument_is_a_page_with_one_line(client: TestClient) -> None:
    page = client.get("/profile", params={"status": "maybe"})
    assert page.status_code == 400 and "status=&#39;maybe&#39;" in page.text
    assert client.get("/trace/4242").status_code == 404


def test_a_note_is_rendered_with_the_hit_highlighted(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    root.mkdir()
    build(root)
    (root / "infra" / "x.md").write_text("# Title\n\nintro\n\n## Port\n\nport **9931** <b>raw</b>\n\n## After\n\nmore\n")  # fmt: skip
    app = Tideline(Settings.load(overrides={"memo_root": str(root), "embedder": "none"}))
    try:
        with client_for(app) as client:
            listed = client.get(
                "/library", params={"q": "9931", "path": "infra", "mode": "lex"}
            ).text
            assert "infra/x.md:5" in listed and "infra" in listed
            html = client.get(
                "/library/note", params={"path": "infra/x.md", "line": 5, "lines": 3}
            ).text
            hit = html.split('id="hit"')[1].split("</div>")[0]
            assert "<strong>9931</strong>" in hit and "&lt;b&gt;raw&lt;/b&gt;" in hit
            assert "<h1>Title</h1>" in html.split('id="hit"')[0]
    finally:
        app.close()


def test_the_runs_page_shows_skipped_runs_and_their_skipped_layers(
    agent: Tideline, client: TestClient, seeded: dict[str, Any]
) -> None:
    assert agent.sleep.run().status == "skipped"  # no LLM configured
    assert agent.dream.run(date="2026-05-02").status == "skipped"
    page = client.get("/runs")
    assert page.status_code == 200
    html = page.text
    assert '<tr class="run-skipped"><td>1</td><td>skipped</td>' in html
    assert "skipped: extract, behaviour, classify" in html
    dream = html[html.index("<h2>Dream runs</h2>") :]
    assert "<td>skipped</td>" in dream and "solidify skipped" in dream
    assert "sleep skipped" in dream and "scripts done" in dream


def test_a_run_started_here_is_titled_by_the_run_it_recorded_and_reads_as_lines(
    agent: Tideline, client: TestClient
) -> None:
    """The panel's first sleep after one from elsewhere (the CLI) is recorded as run #2: its page
    says "Sleep run #2", as the runs table does, not the server's own count (#1); the result is
    the lines the CLI prints, the JSON folded away and wrapped."""
    assert agent.sleep.run().run_id == 1  # a sleep from elsewhere
    csrf = csrf_of(client, "/runs")
    started = client.post("/runs/sleep", data={"csrf": csrf}, follow_redirects=False)
    assert started.status_code == 303 and started.headers["location"] == "/runs/1"
    over = wait_until(lambda: (r := client.get("/api/runs/1").json())["status"] != "running" and r)
    assert over["run_id"] == over["report"]["run_id"] == 2 and over["lines"][0].startswith("sleep")
    html = client.get("/runs/1").text
    assert '<h1 id="run-title">Sleep run #2</h1>' in html and "Sleep #1" not in html
    summary = html.split('<pre id="run-summary" class="summary">', 1)[1].split("</pre>", 1)[0]
    assert summary.splitlines() == [escape(line) for line in over["lines"]]
    assert "<details><summary>the report as JSON</summary>" in html
    assert ">sleep run #2</a>" in client.get("/runs").text


def test_a_reflection_shows_both_clocks_on_panel_api_and_cli(
    agent: Tideline, client: TestClient
) -> None:
    """A reflection a dream wrote of an earlier day: the day it reflects on (valid time) and
    when Tideline wrote it and a correction retired it (record time), on every driver."""
    old = agent.memory.write(
        gesture="I keep choosing the garden", kind="reflection", created_at="2026-04-20T12:00:00Z"
    )
    agent.memory.write(gesture="I choose the sea now", kind="reflection", supersedes=old.id)
    html = client.get(f"/trace/{old.id}").text
    assert (
        "of 2026-04-20 12:00" in html
        and "recorded 2026-05-03 12:00, retired 2026-05-03 12:00" in html
    )
    api = client.get(f"/api/narratives/{old.id}/trace").json()["narrative"]
    assert (api["created_at"], api["recorded_at"], api["retired_at"]) == (
        "2026-04-20T12:00:00Z", "2026-05-03T12:00:00Z", "2026-05-03T12:00:00Z",
    )  # fmt: skip
    said = CliRunner().invoke(cli, ["trace", str(old.id)], catch_exceptions=False).stdout
    assert (
        "reflection of 2026-04-20T12:00 (the user's time) · recorded 2026-05-03T12:00, retired "
        "2026-05-03T12:00 (Tideline's time)"
    ) in " ".join(said.split())
