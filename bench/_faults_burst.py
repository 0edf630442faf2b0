"""Bursts of concurrent HTTP requests against one `tideline serve --transport http`, with each
embedder kind, and every write retried as a client that lost its answer retries it (#21: 12 of
180 requests in 60-way bursts answered 500 with the OpenAI-protocol embedder, and 3 of those
writes were stored anyway, so the client's retry duplicated them).

A burst is `WIDTH` requests sent at once: keyed narratives (`POST /api/narratives` with an
`Idempotency-Key` header), keyed turns (`POST /api/turns`, the key in the body), keyed appends to
one note (`POST /api/library/notes`), searches with turns, and stats. One write in eight loses its
answer: it is thrown away after it came (the write was committed), or the client gives up after
10–500 ms (committed or not), and the write is sent again with the same key until answered. After the last burst every write is sent
once more, as if every answer had been lost. Then: every answer was 2xx (errors otherwise), the
database holds exactly the narratives and turns that were acknowledged and the note each
appended line exactly once (duplicates otherwise), and every resend was `replayed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _faults_report import Row
from _report import pct

from tests.library.notes import make_collection
from tests.mcp.conftest import HttpServer, start_http, stop
from tests.openai_stub import OpenAIStub

WIDTH = 60
LOST = 8  # one write in LOST loses its answer
NOTE = "log/day.md"


@dataclass
class Burst:
    """What the client saw."""

    ids: dict[str, dict[str, int]] = field(default_factory=lambda: {"n": {}, "t": {}, "m": {}})
    errors: list[str] = field(default_factory=list)
    lost: int = 0
    discarded: int = 0  # answers that came and were thrown away: each retry must be replayed
    dropped: list[str] = field(default_factory=list)  # connections that broke under a request
    replayed: int = 0
    resent: int = 0
    seconds: list[float] = field(default_factory=list)


def _request(i: int) -> tuple[str, str, str, dict[str, Any], dict[str, str]]:
    """(kind, method, url, body, headers) of request `i`."""
    slot = i % 12
    if slot < 4:
        key = f"n-{i}"
        body = {"gesture": f"burst memory {i} about the harbour lanterns", "tags": ["burst"]}
        return "n", "POST", "/api/narratives", body, {"Idempotency-Key": key}
    if slot < 7:
        text = f"burst turn {i}: the ferry leaves at noon"
        body = {"session": f"burst-{i % 7}", "role": "user", "text": text}
        return "t", "POST", "/api/turns", {**body, "idempotency_key": f"t-{i}"}, {}
    if slot == 7:
        body = {"path": NOTE, "text": f"- line m{i}m", "append": True, "idempotency_key": f"m-{i}"}
        return "m", "POST", "/api/library/notes", body, {}
    if slot < 11:
        return "s", "GET", f"/api/search?query=harbour+lanterns+{i}&include_turns=true", {}, {}
    return "s", "GET", "/api/stats", {}, {}


async def _send(http: httpx.AsyncClient, i: int, log: Burst, rng: random.Random) -> None:
    """One request; a write may lose its answer (thrown away after it came: the write was
    committed; or the client gave up waiting: committed or not) and is then sent again."""
    kind, method, url, body, headers = _request(i)
    loss = rng.choice(("discarded", "gave up", None, None, None, None, None, None))
    loss = loss if kind != "s" else None
    for attempt in range(6):
        started = time.perf_counter()
        try:
            call = http.request(method, url, json=body or None, headers=headers)
            if loss == "gave up" and attempt == 0:
                answer = await asyncio.wait_for(call, rng.uniform(0.01, 0.5))
            else:
                answer = await call
        except TimeoutError:
            log.lost += 1
            continue  # the answer was lost: send it again with the same key
        except httpx.TransportError as exc:  # the connection dropped (a keep-alive closed by
            log.lost += 1  # the server as the client reused it): the answer is lost too
            log.dropped.append(type(exc).__name__)
            continue
        log.seconds.append(time.perf_counter() - started)
        if answer.status_code >= 300:
            log.errors.append(f"{method} {url}: {answer.status_code} {answer.text[:120]}")
            return
        if loss == "discarded" and attempt == 0:
            log.lost += 1
            log.discarded += 1
            continue
        if kind != "s":
            data = answer.json()
            log.ids[kind][f"{kind}-{i}"] = data.get("id", data.get("added_at_line", 0))
            log.replayed += bool(attempt and data.get("replayed"))
        return
    log.errors.append(f"{method} {url}: no answer after 6 tries")


async def _resend(http: httpx.AsyncClient, i: int, log: Burst) -> None:
    """A write sent again after everything: the first answer must come back, `replayed`."""
    kind, method, url, body, headers = _request(i)
    for _ in range(6):
        try:
            answer = await http.request(method, url, json=body, headers=headers)
            break
        except httpx.TransportError as exc:
            log.dropped.append(type(exc).__name__)
    else:
        log.errors.append(f"resent {url} {kind}-{i}: the connection broke 6 times")
        return
    log.resent += 1
    data = answer.json() if answer.status_code < 300 else {}
    first = log.ids[kind].get(f"{kind}-{i}")
    if not data.get("replayed") or data.get("id", data.get("added_at_line")) != first:
        log.errors.append(f"resent {url} {kind}-{i}: {answer.status_code} {answer.text[:120]}")


async def _run(base: str, requests: int, seed: int) -> Burst:
    log, rng = Burst(), random.Random(seed)
    limits = httpx.Limits(max_connections=WIDTH, max_keepalive_connections=WIDTH)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
        for start in range(0, requests, WIDTH):
            ids = range(start, min(start + WIDTH, requests))
            await asyncio.gather(*(_send(http, i, log, rng) for i in ids))
        writes = [i for i in range(requests) if _request(i)[0] != "s"]
        for start in range(0, len(writes), WIDTH):
            await asyncio.gather(*(_resend(http, i, log) for i in writes[start : start + WIDTH]))
    return log


@contextlib.contextmanager
def _server(work: Path, embedder: str) -> Iterator[HttpServer]:
    root = work / "lib"
    make_collection(root, "log", "A running log", {"day.md": "# Day\n"})
    env = {"TIDELINE_EMBEDDER": embedder, "MEMO_ROOT": str(root)}
    with contextlib.ExitStack() as stack:
        if embedder == "openai":
            stub = stack.enter_context(OpenAIStub(dim=32))
            env |= {"TIDELINE_EMBED_URL": stub.url, "TIDELINE_EMBED_MODEL": "stub"}
        server = start_http(work, ready_within=180, **env)  # e5 loads on a busy machine
        try:
            yield server
        finally:
            stop(server.proc)


def _stored(base: str, note: Path) -> tuple[int, int, dict[str, int]]:
    stats = httpx.get(f"{base}/api/stats", timeout=60).json()
    lines = Counter(f"m-{n}" for n in re.findall(r"^- line m(\d+)m$", note.read_text(), re.M))
    return stats["narratives"], stats["turns"], dict(lines)


def burst(work: Path, embedder: str, requests: int, seed: int = 5) -> Row:
    """`requests` requests in bursts of `WIDTH` against a server with `embedder`."""
    work.mkdir(parents=True)
    with _server(work, embedder) as server:
        base = f"http://127.0.0.1:{server.port}"
        log = asyncio.run(_run(base, requests, seed))
        narratives, turns, lines = _stored(base, work / "lib" / NOTE)
        tracebacks = server.stderr().count("Traceback")
    said = {k: len(v) for k, v in log.ids.items()}
    extra = {
        "narratives": narratives - said["n"],
        "turns": turns - said["t"],
        "note lines": sum(n - 1 for n in lines.values()) + len(set(lines) - set(log.ids["m"])),
    }
    missing = len(set(log.ids["m"]) - set(lines))
    dups = sum(max(0, n) for n in extra.values())
    lost_writes = sum(max(0, -n) for n in extra.values()) + missing
    unreplayed = max(0, log.discarded - log.replayed)
    failures = len(log.errors) + tracebacks + dups + lost_writes + unreplayed
    name = {"none": "none", "openai": "loopback OpenAI-protocol", "e5": "bundled e5"}[embedder]
    ms = [s * 1000 for s in log.seconds]
    figure = (
        f"{requests:,} requests in bursts of {WIDTH}: {len(log.errors)} errors, {tracebacks} "
        f"tracebacks; {dups} duplicates, {lost_writes} lost (stored {narratives} narratives / "
        f"{said['n']} acknowledged, {turns} turns / {said['t']}, {len(lines)} note lines / "
        f"{said['m']}); {log.lost} answers lost and retried ({log.discarded} thrown away after "
        f"they came, {log.lost - log.discarded} given up on or dropped by the connection: "
        f"{', '.join(f'{n} {k}' for k, n in Counter(log.dropped).items()) or 'none dropped'}; "
        f"{log.replayed} replayed), every "
        f"one of {log.resent:,} writes sent again: replayed; answer median "
        f"{statistics.median(ms):.0f} ms, p95 {pct(ms, 95):.0f} ms"
        + (f"; e.g. {log.errors[0]}" if log.errors else "")
    )
    return Row(
        f"concurrent HTTP bursts (writes, notes, searches; lost answers retried), {name} embedder",
        requests + log.lost + log.resent,
        failures,
        figure,
    )
