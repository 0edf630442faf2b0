"""The HTTP server as a stranger and a greedy client meet it: namespaces and body caps (#21).

*Namespaces.* One `tideline serve --transport http` with a tokens file: ANA opens the agent ana
(library notes/ana), BO the agent bo (notes/bo), and HUI, the server's TIDELINE_TOKEN, its own
namespace (library MEMO_ROOT = notes/hui). Each round every token writes, in the same words with
a mark of its own, a turn and a narrative (REST), a narrative (MCP `memory_write`), a note at the
same path in every namespace (REST) and another (MCP `memo_write`); then every token reads through
every surface — REST memory search with turns, library search and read; MCP `memory_search`,
`memo_search`, `memo_read` (the SDK's client over streamable HTTP); the panel's search, library
search and note pages after logging in with the token. A cross read is another namespace's mark
in an answer; a cross write is a mark in another namespace's files or database. On SQLite and on
PostgreSQL (pgserver), where each namespace is a schema.

*Body caps.* A 300 MB body to each capped route, declared by Content-Length and sent chunked: the
answer must be 413 in one line within 10 s, the server must have read no more than the cap and
what the sockets buffer, grow by no more than three caps, and go on answering (#21 item 6: a
300 MB narrative was read and parsed for 20 s, the server growing from 205 to 750 MB).
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from _faults_report import Row
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import HttpServer, payload, start_http, stop
from tests.web.conftest import csrf_of
from tests.web.test_limits import HUGE, post_raw, rss_mb
from tests.web.test_namespaces import api, collection
from tideline.mcp import MCP_BODY_LIMIT
from tideline.web._routes import FORM, JSON, ROUTES

WORDS = "the heron counts lanterns by the boat shed"
NAMES = ("ana", "bo", "hui")


@dataclass
class Tally:
    """What the namespace probes found."""

    reads: int = 0
    cross_reads: list[str] = field(default_factory=list)
    writes: int = 0
    cross_writes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@contextlib.contextmanager
def _postgres(work: Path) -> Iterator[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgserver: no XDG_RUNTIME_DIR here
        import pgserver

        folder = Path(tempfile.mkdtemp(prefix="tideline-pg-"))  # not under `work` (mode 0700)
        server = pgserver.get_server(folder / "d", "delete")
    try:
        yield server.get_uri()
    finally:  # a throwaway server: stop at once (a clean shutdown waits for its checkpoint)
        pgserver.pg_ctl(
            ["-m", "immediate", "-w", "stop"], pgdata=server.pgdata, user=server.system_user
        )
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def _tokens(work: Path, user: str) -> tuple[dict[str, str], Path]:
    tokens = {name: secrets.token_urlsafe(32) for name in NAMES}
    path = work / "tokens.toml"
    path.write_text(
        "".join(
            f'[[token]]\ntoken = "{tokens[n]}"\nagent = "{n}"\nuser = "{user}"\n'
            f'library = "notes/{n}"\n\n'
            for n in ("ana", "bo")
        )
    )
    return tokens, path


def _mark(who: str, round_: int, where: str) -> str:
    return f"zz{who}{round_}{where}zz"


async def _mcp(server: HttpServer, token: str, writes: dict[str, Any], reads: int) -> list[str]:
    """The MCP writes of one round, then the answers of its reads (as text)."""
    async with (
        httpx2.AsyncClient(
            headers={"authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60)
        ) as http,
        Client(streamable_http_client(server.url, http_client=http)) as c,
    ):
        for tool, args in writes.items():
            payload(await c.call_tool(tool, args))
        answers = []
        for tool, args in (
            ("memory_search", {"query": WORDS, "include_turns": True, "k": 50}),
            ("memo_search", {"query": WORDS, "path": "*"}),
            ("memo_read", {"path": f"work/r{reads}.md"}),
        ):
            result = await c.call_tool(tool, args)
            answers.append(str(result.content[0].text if result.content else result))
        return answers


def _write(server: HttpServer, token: str, who: str, r: int) -> None:
    with api(server, token) as http:
        turn = http.post(
            "/api/turns",
            json={"session": f"s{r}", "role": "user", "text": f"{WORDS} {_mark(who, r, 't')}"},
        )
        turn.raise_for_status()
        gesture = f"{WORDS} {_mark(who, r, 'n')}"
        http.post("/api/narratives", json={"gesture": gesture}).raise_for_status()
        note = {"path": f"work/r{r}.md", "text": f"# {WORDS}\n{_mark(who, r, 'l')}\n"}
        http.post("/api/library/notes", json=note).raise_for_status()


def _panel(server: HttpServer, token: str, r: int) -> list[str]:
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60) as browser:
        login = browser.post("/login", data={"csrf": csrf_of(browser, "/login"), "token": token})
        if login.status_code != 303:
            raise RuntimeError(f"panel login: {login.status_code}")
        pages = [
            browser.get("/", params={"q": WORDS}),
            browser.get("/library", params={"q": WORDS}),
            browser.get("/library/note", params={"path": f"work/r{r}.md"}),
        ]
    return [f"{p.status_code} {p.text}" for p in pages]


def _rest(server: HttpServer, token: str, r: int) -> list[str]:
    with api(server, token) as http:
        pages = [
            http.get("/api/search", params={"query": WORDS, "include_turns": "true", "k": 50}),
            http.get("/api/library/search", params={"query": WORDS, "path": "*"}),
            http.get("/api/library/read", params={"path": f"work/r{r}.md"}),
        ]
    return [f"{p.status_code} {p.text}" for p in pages]


def _probe(tally: Tally, surface: str, who: str, r: int, answers: list[str]) -> None:
    """Each answer must show `who`'s own mark of this round and no other namespace's."""
    for i, text in enumerate(answers):
        tally.reads += 1
        foreign = [o for o in NAMES if o != who and f"zz{o}" in text]
        if foreign:
            tally.cross_reads.append(f"{surface} #{i} as {who} showed {foreign}")
        own = f"zz{who}{r}" if i == 2 else f"zz{who}"  # the note of this round; any hit of its own
        if text.startswith(("4", "5")) or own not in text:
            tally.errors.append(f"{surface} #{i} as {who}: its own mark missing: {text[:120]}")


def _namespace_run(work: Path, rounds: int, env: dict[str, str]) -> Tally:
    tally = Tally()
    user = f"u{secrets.token_hex(4)}"
    tokens, path = _tokens(work, user)
    for name in NAMES:
        collection(work / "notes" / name)
    server = start_http(
        work,
        token=tokens["hui"],
        TIDELINE_TOKENS_FILE=str(path),
        TIDELINE_EMBEDDER="none",
        MEMO_ROOT=str(work / "notes" / "hui"),
        **env,
    )
    try:
        for r in range(rounds):
            for who in NAMES:
                try:
                    _write(server, tokens[who], who, r)
                    writes = {
                        "memory_write": {"gesture": f"{WORDS} {_mark(who, r, 'mn')}"},
                        "memo_write": {"path": f"work/m{r}.md", "text": _mark(who, r, "ml")},
                    }
                    mcp = anyio.run(_mcp, server, tokens[who], writes, r)
                except Exception as exc:  # the probe's own failure is counted, not raised
                    tally.errors.append(f"writes as {who}, round {r}: {type(exc).__name__}: {exc}")
                    continue
                tally.writes += 5
                _probe(tally, "REST", who, r, _rest(server, tokens[who], r))
                _probe(tally, "MCP", who, r, mcp)
                _probe(tally, "panel", who, r, _panel(server, tokens[who], r))
        for who in NAMES:  # what each namespace holds, on disk and in its database
            for note in (work / "notes" / who).rglob("*.md"):
                foreign = [o for o in NAMES if o != who and f"zz{o}" in note.read_text()]
                if foreign:
                    tally.cross_writes.append(f"{note} holds {foreign}")
            with api(server, tokens[who]) as http:
                stats = http.get("/api/stats").json()
            if (stats["narratives"], stats["turns"]) != (2 * rounds, rounds):
                tally.cross_writes.append(f"{who}'s database holds {stats}")
        if "Traceback" in server.stderr():
            tally.errors.append("a traceback in the server's log")
    finally:
        stop(server.proc)
    return tally


def namespaces(
    work: Path, rounds: int, engines: tuple[str, ...] = ("sqlite", "postgresql")
) -> list[Row]:
    """Three namespaces on one server, `rounds` rounds of writes and reads, per engine."""
    rows = []
    for engine in engines:
        folder = work / engine
        folder.mkdir(parents=True)
        with contextlib.ExitStack() as stack:
            env = {}
            if engine == "postgresql":
                env = {"TIDELINE_DATABASE_URL": stack.enter_context(_postgres(folder))}
            t = _namespace_run(folder, rounds, env)
        failures = len(t.cross_reads) + len(t.cross_writes) + len(t.errors)
        example = (t.cross_reads + t.cross_writes + t.errors)[:1]
        rows.append(
            Row(
                f"namespaces: three tokens on one server, REST + MCP + panel, memory + library ({engine})",
                t.reads + t.writes,
                failures,
                f"{rounds} rounds: {t.writes} writes, {t.reads} reads (9 per token a round: REST "
                f"search, library search, note; MCP memory_search, memo_search, memo_read; panel "
                f"search, library, note): {len(t.cross_reads)} cross-namespace reads, "
                f"{len(t.cross_writes)} cross-namespace writes, {len(t.errors)} other errors"
                + (f"; e.g. {example[0][:200]}" if example else ""),
            )
        )
    return rows


#: (route, extra headers, its cap): every kind of capped body.
CAPPED = [
    ("/api/narratives", "", JSON),
    ("/api/turns", "", ROUTES["/api/turns"]),
    ("/api/library/notes", "", ROUTES["/api/library/notes"]),
    ("/mcp", "accept: application/json, text/event-stream\r\n", MCP_BODY_LIMIT),
    ("/login", "", FORM),
]


def body_caps(work: Path, repeats: int) -> Row:
    """300 MB to each capped route, `repeats` times each way (declared, chunked)."""
    (work / "notes" / "work").mkdir(parents=True)
    (work / "notes" / "work" / "_meta.yaml").write_text("name: work\ndescription: notes\n")
    server = start_http(work, TIDELINE_EMBEDDER="none", MEMO_ROOT=str(work / "notes"))
    failed: list[str] = []
    took: list[float] = []
    growth, start_rss, trials, most_read = 0.0, rss_mb(server), 0, 0
    try:
        for _ in range(repeats):
            for path, headers, cap in CAPPED:
                for chunked in (False, True):
                    trials += 1
                    before = rss_mb(server)
                    started = time.monotonic()
                    status, answer, sent = post_raw(server, path, headers, chunked)
                    took.append(time.monotonic() - started)
                    grew = rss_mb(server) - before
                    growth = max(growth, grew)
                    most_read = max(most_read, sent - cap)
                    error = str(answer.get("error", ""))
                    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}") as http:
                        alive = http.get("/api/stats").status_code == 200
                    if (
                        status != 413
                        or "\n" in error
                        or took[-1] >= 10
                        or sent > cap + 16 * 1024 * 1024
                        or grew >= 3 * cap / 1024 / 1024 + 32
                        or not alive
                    ):
                        failed.append(
                            f"{path} chunked={chunked}: {status}, {took[-1]:.1f} s, {grew:.0f} MB, {error}"
                        )
        tracebacks = server.stderr().count("Traceback")
        end_rss = rss_mb(server)
    finally:
        stop(server.proc)
    return Row(
        "request bodies of 300 MB to every capped route (declared and chunked)",
        trials,
        len(failed) + tracebacks,
        f"{trials - len(failed)} of {trials} refused 413 in one line; slowest {max(took):.2f} s; "
        f"sent past the cap at most {max(0, most_read) / 2**20:.1f} MB (socket buffers; "
        f"{HUGE // 2**20} MB offered); the server grew by at most {growth:.0f} MB a request "
        f"({start_rss:.0f} → {end_rss:.0f} MB over the run) and answered after each; "
        f"{tracebacks} tracebacks" + (f"; e.g. {failed[0]}" if failed else ""),
    )
