"""The panel in a real browser: headless Chromium from the Debian package, driven by Playwright
(`executable_path` at the system Chromium; no browser download), against `tideline serve` and the
scripted OpenAI-protocol server. A person finds a memory, traces it, runs a sleep, marks the fact
it formed wrong, and looks at the pictures; every page is screenshotted and must log no console
error. Skipped, with the reason, where no Chromium is installed (`.ci/run` installs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.consolidate import story
from tests.llm_server import LLMServer
from tests.mcp.conftest import HttpServer, server_env, start_http, stop
from tests.web.chromium import needs_chromium
from tests.web.overlaps import overlaps
from tideline.web._graph_layout import Box

pytestmark = needs_chromium
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")

#: Memories about a few themes, so the script layer finds clusters (and deserts) and an entity graph.
MEMORIES = [
    ("Sailed the boat Heron to the island with Ana", "Ana: crew; Heron: boat"),
    ("Fixed the Heron's mast before the regatta", "Heron: boat; Ana: crew"),
    ("Ana won the regatta on the Heron", "Ana: skipper; Heron: boat"),
    ("Baked sourdough bread with a new starter", "Leo: baker"),
    ("The sourdough starter died in the heat wave", "Leo: baker"),
    ("Started learning Japanese grammar with Kenji", "Kenji: teacher"),
    ("Passed the JLPT N4 exam after Kenji's lessons", "Kenji: teacher"),
    ("Moved the home office to the attic", ""),
]


#: The entity graph's geometry as the browser laid it out (label boxes, node circles).
GEOMETRY = """() => {
  const svg = document.querySelector('svg.graph');
  const labels = [...svg.querySelectorAll('text')].map((t) => {
    const b = t.getBBox(); return {x: b.x, y: b.y, w: b.width, h: b.height};
  });
  const circles = [...svg.querySelectorAll('circle')].map((c) => (
    {x: c.cx.baseVal.value, y: c.cy.baseVal.value, r: c.r.baseVal.value}));
  return {labels, circles};
}"""


@pytest.fixture(scope="module")
def llm() -> Iterator[LLMServer]:
    with LLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory, llm: LLMServer) -> Iterator[HttpServer]:
    """`tideline serve` with the bundled embedder and the scripted LLM, seeded over the API."""
    tmp = tmp_path_factory.mktemp("browser")
    llm_env = {"TIDELINE_LLM_BASE_URL": llm.url, "TIDELINE_LLM_MODEL": "scripted-model",
               "TIDELINE_LLM_BACKOFF": "0.001"}  # fmt: skip
    server = start_http(tmp, **llm_env)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60) as http:
            user = http.post("/api/turns", json={"session": story.SESSION, "role": "user", "text": story.USER}).json()  # fmt: skip
            http.post("/api/turns", json={"session": story.SESSION, "role": "assistant", "text": story.REPLY})  # fmt: skip
            story.script(llm, user["id"])
            http.post("/api/narratives", json={"gesture": "Moved to Osaka to work as a nurse", "source_links": [user["id"]], "entities_role": "user: nurse"})  # fmt: skip
            for gesture, roles in MEMORIES:
                http.post("/api/narratives", json={"gesture": gesture, "entities_role": roles})
        # the script layer, as cron would run it: topics, clusters, graph
        subprocess.run(
            [sys.executable, "-m", "tideline", "scripts", "all"],
            env=server_env(tmp, **llm_env), check=True, capture_output=True, timeout=300,
        )  # fmt: skip
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60) as http:
            http.get("/api/prefetch", params={"message": "how is the boat Heron doing?"})
        yield server
    finally:
        stop(server.proc)


@pytest.fixture
def page(browser: Any, panel: HttpServer, tmp_path: Path) -> Iterator[Any]:
    """A fresh page; console errors and page errors are collected and must stay empty."""
    context = browser.new_context(
        base_url=f"http://127.0.0.1:{panel.port}", viewport={"width": 1200, "height": 900}
    )
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.errors = errors
    yield tab
    context.close()
    assert errors == [], errors


def shot(tab: Any, name: str) -> Path:
    """A full-page screenshot, under TIDELINE_SCREENSHOTS when set (to look at), else tmp."""
    folder = Path(os.environ.get("TIDELINE_SCREENSHOTS") or tab.context.screens)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5000  # a picture, not a blank
    return path


def test_find_trace_sleep_and_mark_a_fact_wrong(page: Any, tmp_path: Path) -> None:
    page.context.screens = tmp_path
    page.goto("/")
    page.fill("input[name=q]", "Osaka nurse")
    page.click("form.search button")
    first = page.locator("li.hit.narrative a.text").first
    assert "Osaka" in first.inner_text()
    assert "relevance" in page.locator("li.hit.narrative .parts").first.inner_text()
    shot(page, "1-search")
    first.click()
    page.wait_for_url("**/trace/*")
    assert story.USER in page.locator("li.turn.source").first.inner_text()
    shot(page, "2-trace")

    page.goto("/runs")
    page.click("#start-sleep")
    page.wait_for_url("**/runs/*")
    sync_api.expect(page.locator("#run-status")).to_have_text("done", timeout=120_000)
    assert page.locator("#run-progress").get_attribute("max") == page.locator("#run-done").inner_text()  # fmt: skip
    assert page.locator("#run-title").inner_text().startswith("Sleep run #")  # the core's #
    summary = page.locator("#run-summary")  # the CLI's lines, wrapped to the page
    assert summary.inner_text().startswith("sleep done")
    assert summary.evaluate("el => el.scrollWidth <= el.clientWidth")
    assert '"status": "done"' in (page.locator("#run-report").text_content() or "")  # folded
    shot(page, "3-sleep-done")

    page.goto("/profile")
    card = page.locator("article.fact", has_text="lives in Osaka")
    sync_api.expect(card).to_have_attribute("data-status", "suspected")
    card.locator("details.reject summary").click()
    card.locator("details.reject input[name=why]").fill("she moved to Kobe, not Osaka")
    card.locator("details.reject button").click()
    page.wait_for_load_state()
    card = page.locator("article.fact", has_text="lives in Osaka")
    sync_api.expect(card).to_have_class("fact status-rejected")
    assert float(card.evaluate("el => getComputedStyle(el).opacity")) < 1  # greyed, still shown
    assert "she moved to Kobe" in card.inner_text()
    shot(page, "4-fact-marked-wrong")
    page.goto("/runs")
    assert page.locator("tr.run-done").count() >= 1  # the past run, with its tokens
    shot(page, "5-runs")


def test_the_pictures(page: Any, tmp_path: Path) -> None:
    page.context.screens = tmp_path
    page.goto("/pictures")
    assert page.locator("svg.heatmap .bar.desert").count() >= 1  # deserts highlighted
    assert page.locator("svg.heatmap .bar:not(.desert)").count() >= 1  # and what was reached
    nodes = page.locator("svg.graph .node")
    assert nodes.count() >= 4
    assert page.locator("svg.weights circle").count() == len(MEMORIES) + 1
    drawn = page.evaluate(GEOMETRY)  # what Chromium drew: no label over a label or a node
    assert len(drawn["labels"]) == nodes.count()
    centres = [(c["x"], c["y"]) for c in drawn["circles"]]
    radii = [c["r"] for c in drawn["circles"]]
    boxes = [Box(b["x"], b["y"], b["w"], b["h"]) for b in drawn["labels"]]
    assert overlaps(centres, radii, boxes) == [], drawn
    page.locator("svg.graph .node[data-name=Heron] circle").click()
    assert page.locator("svg.graph.focus line.lit").count() >= 1  # its ties lit
    shot(page, "6-pictures")
    page.goto("/sessions")
    page.locator("nav.days a").first.click()
    page.locator("ul.sessions a").first.click()
    assert page.locator("li.turn").count() >= 1
    shot(page, "7-session")
