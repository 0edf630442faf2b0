"""Every link the panel draws works: a crawler in the real browser (Debian's Chromium through
Playwright, as tests/web/test_browser.py) over a home whose imported sessions have keys with
`/`, spaces, Cyrillic and CJK, a library, facts, memories with entities, a run.

Logged in with the token, it visits every page of the panel and follows every link and every
GET form on it once (a form's empty text fields get a word that finds something). It fails on
a 4xx/5xx for any URL the panel drew, on any console or page error, and on any text that looks
like a Python repr (`{'a': 1}`, `None`, `object at 0x…`) or a raw epoch (`1796111438.68`).
Then, without the token, every page it saw must send the browser to the login form and show
none of the memory. A screenshot of every page is kept (`/tmp/tideline-crawl-<uid>/`, emptied
by each run, printed; or TIDELINE_SCREENSHOTS=DIR). Skipped, with the reason, without Chromium."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import httpx
import pytest

from tests.mcp.conftest import HttpServer, start_http, stop
from tests.profile.conftest import add_fact
from tests.web.chromium import needs_chromium
from tideline.analysis.scripts import run_all
from tideline.app import Tideline
from tideline.config import Settings

pytestmark = needs_chromium

DATA = Path(__file__).resolve().parents[1] / "data"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "chat.json"
TOKEN = secrets.token_urlsafe(32)
KEYS = ["openai/chat with spaces", "Москва/встреча 1", "東京/会議 2", "locomo/conv-26/session_1",
        "x/../y", ".."]  # fmt: skip
SECRET_WORD = "Miso"  # said in every imported example session: must not show without the token
#: Text that is a Python object, not words: a dict or list repr, None/True/False, a repr.
PYTHON = re.compile(
    r"\{'|'\}|\['|'\]|\bNone\b|\bTrue\b|\bFalse\b|object at 0x|<[a-z_.]+ object|Traceback"
)
EPOCH = re.compile(r"(?<![\d.])1[4-9]\d{8}(\.\d+)?(?![\d.])")


def seed(home: Path, notes: Path) -> None:
    """Imports (ChatGPT, Claude, and the example chat under each of KEYS), memories with
    entities linked to their turns, facts with evidence, a library, topics and the graph."""
    settings = Settings.load(
        overrides={
            "home": str(home),
            "agent_name": "hui",
            "embedder": "none",
            "memo_root": str(notes),
        }
    )
    app = Tideline(settings)
    try:
        m = app.memory
        m.import_file(DATA / "chatgpt" / "conversations.json")
        m.import_file(DATA / "claude" / "conversations.json")
        for key in KEYS:
            m.import_file(EXAMPLE, "openai", session=key)
        turns = {key: m.session_turns(key) for key in KEYS}
        for n, key in enumerate(KEYS):
            first = turns[key][0]
            m.write(
                gesture=f"Adopted the shy cat Miso ({key})",
                entities_role=f"Miso: cat; Anna: sister; Город {n}: place",
                related_entities=["Miso", "Anna"],
                tags=["pets", "семья"],
                source_links=[first.id, turns[key][2].id],
            )
        m.write(gesture="A note written by hand, with no source turns", importance=2)
        add_fact(app.profile, "has a cat called Miso", turn_ids=(turns[KEYS[0]][0].id,))
        add_fact(app.profile, "sister Anna lives in Porto", category="family",
                 turn_ids=(turns[KEYS[2]][4].id,))  # fmt: skip
        for folder, name, text in (
            (
                "work",
                "vpn.md",
                "# VPN\n\nvpn-7 is back after the reboot; Miso sat on the router.\n",
            ),
            ("личное", "кошка Мисо.md", "# Мисо\n\nMiso hides under the sofa.\n"),
        ):
            app.library.init_collection(folder, f"{folder} notes")
            app.library.write(f"{folder}/{name}", text)
        run_all(m, steps=("topics", "graph"))
    finally:
        app.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    tmp = tmp_path_factory.mktemp("crawl")
    notes = tmp / "notes"
    notes.mkdir()
    seed(tmp / "home", notes)
    started = start_http(tmp, token=TOKEN, TIDELINE_EMBEDDER="none", MEMO_ROOT=str(notes))
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{started.port}", timeout=60,
                          headers={"authorization": f"Bearer {TOKEN}"}) as http:  # fmt: skip
            run = http.post("/api/sleep", json={"dry_run": True})  # a run for /runs to list
            assert run.status_code == 202, run.text
        yield started
    finally:
        stop(started.proc)


def screenshots() -> Path:
    """TIDELINE_SCREENSHOTS, else one folder in the system's tmp that each run empties (pytest's
    own tmp folders are rotated away by other runs); its path is printed."""
    chosen = os.environ.get("TIDELINE_SCREENSHOTS")
    folder = Path(chosen) if chosen else Path(tempfile.gettempdir()) / f"tideline-crawl-{os.getuid()}"  # fmt: skip
    if not chosen:
        shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def drawn(tab: Any) -> list[str]:
    """The links of the page and its GET forms as URLs (forms with words in empty fields)."""
    return list(
        tab.evaluate(
            """() => {
      const out = [...document.querySelectorAll('a[href]')].map((a) => a.href);
      for (const form of document.querySelectorAll('form')) {
        if ((form.getAttribute('method') || 'get').toLowerCase() !== 'get') continue;
        const data = new FormData(form);
        for (const input of form.querySelectorAll('input[name]')) {
          if (['search', 'text'].includes(input.type) && !input.value && input.name === 'q') {
            data.set(input.name, 'Miso');
          }
        }
        const url = new URL(form.action, location.href);
        url.search = new URLSearchParams(data).toString();
        out.push(url.href);
      }
      return out;
    }"""
        )
    )


def local(url: str, base: str) -> str | None:
    """The path and query of a link to this server (fragment dropped), else None."""
    parts = urlsplit(urljoin(base, url))
    if f"{parts.scheme}://{parts.netloc}" != base or parts.scheme not in ("http", "https"):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_every_page_and_link_of_the_panel(browser: Any, server: HttpServer) -> None:
    base = f"http://127.0.0.1:{server.port}"
    folder = screenshots()
    context = browser.new_context(base_url=base, viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(f"{tab.url}: {m.text}") if m.type == "error" else None)  # fmt: skip
    tab.on("pageerror", lambda e: errors.append(f"{tab.url}: {e}"))
    tab.goto("/login")
    tab.fill("input[name=token]", TOKEN)
    tab.click("form button")
    tab.wait_for_url(f"{base}/")

    queue = ["/", "/sessions", "/profile", "/pictures", "/library", "/runs", "/api/docs"]
    seen: dict[str, str] = {}  # url → where the crawler found it
    seen.update((u, "the menu") for u in queue)
    bad: list[str] = []
    pages = 0
    while queue:
        url = queue.pop(0)
        answer = tab.goto(url)
        status = answer.status if answer is not None else 0
        if status >= 400:
            bad.append(f"{url} (drawn on {seen[url]}): {status}")
            continue
        html_page = "html" in (answer.headers.get("content-type", "") if answer else "")
        if not html_page:  # the schema and the API index the reference links to
            continue
        pages += 1
        text = tab.inner_text("body")
        for pattern, what in ((PYTHON, "a Python repr"), (EPOCH, "a raw epoch")):
            found = pattern.search(text)
            if found:
                bad.append(
                    f"{url}: {what}: …{text[max(0, found.start() - 40) : found.end() + 40]}…"
                )
        name = re.sub(r"[^A-Za-z0-9]+", "-", url).strip("-")[:60] or "search"
        tab.screenshot(path=str(folder / f"{pages:03d}-{name}.png"), full_page=True)
        for link in drawn(tab):
            target = local(link, base)
            if target is not None and target not in seen and not target.startswith("/static/"):
                seen[target] = url
                queue.append(target)
    context.close()
    print(f"\ncrawler: {pages} pages, {len(seen)} links; screenshots in {folder}")
    assert not bad, "\n".join(bad)
    assert not errors, "\n".join(errors)
    assert pages >= 40, sorted(seen)
    for key in KEYS:  # every session page of the odd keys was reached through a drawn link
        assert any(u.startswith("/sessions/") and key in unquote(u) for u in seen), key
    assert any(u.startswith("/library/note") for u in seen)
    assert any(u.startswith("/facts/") for u in seen) and any(u.startswith("/trace/") for u in seen)
    assert any(re.fullmatch(r"/runs/\d+", u) for u in seen)

    stranger = browser.new_context(base_url=base)  # no token: every page is the login form
    tab = stranger.new_page()
    for url in [u for u in seen if not u.startswith("/api")]:
        answer = tab.goto(url)
        assert answer is not None and answer.status == 200, url
        assert urlsplit(tab.url).path == "/login", (url, tab.url)
        assert SECRET_WORD not in tab.inner_text("body"), url
    assert errors == []
    stranger.close()
