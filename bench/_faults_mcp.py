"""Faults that need the MCP server: the concurrency soak and the long-input latency.

The soak runs, for a fixed time on one agent database and one library: an MCP client (the
official SDK over stdio, spawning `python -m tideline serve`), `tideline write` processes in a
loop, and `memo watch` indexing notes that another thread keeps rewriting while the MCP client
searches them. The latency test sends one long query from a client of an HTTP server while a
second client keeps calling `memory_stats`: the longest of those calls is how long it waited.
"""

from __future__ import annotations

import os
import random
import statistics
import string
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from _faults_report import Row
from _report import pct
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.kills import BIN, WORDS, cli_env, query, quick_check, run
from tests.mcp.conftest import free_port, serve_command, server_env, stop

LOCKED = "database is locked"
NO_SPACES = "".join(random.Random(4).choices(string.ascii_lowercase, k=1_000_000))


def _library(base: Path) -> Path:
    root = base / "soak-lib"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "_meta.yaml").write_text("description: soak notes\n")
    for i in range(10):
        (root / "notes" / f"n{i}.md").write_text(f"# Note {i}\n\nharbour lanterns {i}\n")
    return root


class SoakLog:
    """Acknowledged writes and errors, from every writer."""

    def __init__(self) -> None:
        self.turns: set[str] = set()
        self.gestures: set[str] = set()
        self.calls = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def add(self, kind: str, text: str) -> None:
        with self.lock:
            (self.turns if kind == "turn" else self.gestures).add(text)

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


async def _mcp_loop(params: StdioServerParameters, log: SoakLog, until: float, err: Path) -> None:
    with err.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as c:
            i = 0
            while time.monotonic() < until:
                i += 1
                text = f"soak turn {i} " + " ".join(WORDS[i % 7 : i % 7 + 5])
                calls: list[tuple[str, dict[str, Any], str]] = [
                    ("sync_turn", {"session": "soak", "role": "user", "text": text}, "turn"),
                    ("memory_write", {"gesture": f"soak mcp write {i}"}, "gesture"),
                    ("memo_search", {"query": "harbour lanterns", "mode": "lex"}, ""),
                ]
                for tool, args, kind in calls:
                    result = await c.call_tool(tool, args)
                    log.calls += 1
                    if result.is_error:
                        log.error(result.content[0].text)
                    elif kind:
                        log.add(kind, args.get("text") or args["gesture"])


def _cli_writes(env: dict[str, str], log: SoakLog, until: float) -> None:
    i = 0
    while time.monotonic() < until:
        i += 1
        gesture = f"soak cli write {i}"
        result = run([str(BIN / "tideline"), "write", gesture, "--json"], env)
        log.calls += 1
        if result.acknowledged:
            log.add("gesture", gesture)
        else:
            log.error(result.stderr.strip())


def _edit_notes(root: Path, until: float) -> int:
    i = 0
    while time.monotonic() < until:
        i += 1
        (root / "notes" / f"n{i % 10}.md").write_text(f"# Note {i}\n\nharbour lanterns {i}\n")
        time.sleep(0.05)  # a person saving a file, not a wait for anything
    return i


def soak(base: Path, seconds: float) -> Row:
    """MCP + CLI writes + `memo watch` on one database for `seconds`; count locks and losses."""
    root, home = _library(base), base / "soak"
    env = cli_env(home, MEMO_ROOT=str(root))
    watch_log = base / "soak-watch.log"
    with watch_log.open("wb") as err:
        watcher = subprocess.Popen(
            [str(BIN / "memo"), "watch", str(root), "--debounce", "0.2"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    command, *args = serve_command("--transport", "stdio")
    params = StdioServerParameters(command=command, args=args, env=env)
    log, until = SoakLog(), time.monotonic() + seconds
    threads = [
        threading.Thread(target=_cli_writes, args=(env, log, until)),
        threading.Thread(target=_edit_notes, args=(root, until)),
    ]
    try:
        for t in threads:
            t.start()
        anyio.run(_mcp_loop, params, log, until, base / "soak-server.log")
    finally:
        for t in threads:
            t.join()
        stop(watcher)  # type: ignore[arg-type]
    return _soak_row(home / "home" / "memory.db", log, watch_log, base, seconds)


def _soak_row(db: Path, log: SoakLog, watch_log: Path, base: Path, seconds: float) -> Row:
    texts = {str(r[0]) for r in query(db, "SELECT text FROM turns")}
    gestures = {str(r[0]) for r in query(db, "SELECT gesture FROM narratives")}
    lost = len(log.turns - texts) + len(log.gestures - gestures)
    logs = watch_log.read_text(errors="replace") + (base / "soak-server.log").read_text(
        errors="replace"
    )
    locked = sum(LOCKED in e for e in log.errors) + logs.count(LOCKED)
    acked = len(log.turns) + len(log.gestures)
    corrupt = int(not quick_check(db))
    figure = (
        f"{seconds:.0f} s, {log.calls:,} calls: {locked} “database is locked”, {lost} lost of "
        f"{acked:,} acknowledged writes, {len(log.errors)} other errors, {corrupt} corrupt"
    )
    return Row(
        "concurrency soak (MCP + CLI writes + watcher)", acked, lost + locked + corrupt, figure
    )


# -- long inputs --------------------------------------------------------------------------------
def _start_http(base: Path, env_extra: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port, log = free_port(), base / "latency-server.log"
    with log.open("ab") as err:
        proc = subprocess.Popen(
            serve_command("--transport", "http", "--port", str(port)),
            env=server_env(base, **env_extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx2.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            break
        except httpx2.HTTPError:
            time.sleep(0.05)
    return proc, f"http://127.0.0.1:{port}/mcp"


async def _client(url: str, scenario: Callable[[Any], Awaitable[Any]]) -> Any:
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(600)) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=600) as c,
    ):
        return await scenario(c)


async def _long_call(
    url: str, tool: str, args: dict[str, Any], deadline: float
) -> tuple[float, float, int, str]:
    """(seconds of the long call or the deadline, longest concurrent memory_stats, its calls,
    the error it returned if any)."""
    other_scope, waits, pending = anyio.CancelScope(), [], {}
    result: dict[str, Any] = {}

    async def long(c: Any) -> None:
        started = time.monotonic()
        with anyio.move_on_after(deadline):
            answer = await c.call_tool(tool, args)
            if answer.is_error:
                result["refused"] = answer.content[0].text[:80]
        result["long"] = time.monotonic() - started
        other_scope.cancel()

    async def other(c: Any) -> None:
        with other_scope:
            while True:
                pending["start"] = time.monotonic()
                await c.call_tool("memory_stats", {})
                waits.append(time.monotonic() - pending.pop("start"))
        if "start" in pending:  # cut off while still waiting: it waited at least this long
            waits.append(time.monotonic() - pending["start"])

    async def quietly(scenario: Callable[[Any], Awaitable[Any]]) -> None:
        try:
            await _client(url, scenario)
        except Exception:  # a call cut off at the deadline breaks the client's own streams
            if "long" not in result:
                raise

    async with anyio.create_task_group() as tg:
        tg.start_soon(quietly, long)
        tg.start_soon(quietly, other)
    return result["long"], max(waits, default=0.0), len(waits), result.get("refused", "")


async def _alone_call(url: str, tool: str, args: dict[str, Any], deadline: float) -> float:
    """Seconds of the long call with no other client (the deadline if cut off)."""
    took: dict[str, float] = {}

    async def one(c: Any) -> None:
        started = time.monotonic()
        with anyio.move_on_after(deadline):
            await c.call_tool(tool, args)
        took["s"] = time.monotonic() - started

    try:
        await _client(url, one)
    except Exception:  # a call cut off at the deadline breaks the client's own streams
        if "s" not in took:
            raise
    return took["s"]


async def _seed(c: Any) -> None:
    await c.call_tool("sync_turn", {"session": "lat", "role": "user", "text": "harbour lanterns"})
    await c.call_tool("memory_write", {"gesture": "a narrative about harbour lanterns"})
    await c.call_tool("memory_search", {"query": "harbour", "include_turns": True})
    await c.call_tool("memo_search", {"query": "harbour"})


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) a process has used: its work, whatever the load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _spread(values: list[float]) -> str:
    """median / p95 / max of some seconds, as the figure shows them."""
    median, p95, top = (
        round(v, 2) + 0.0 for v in (statistics.median(values), pct(values, 95), max(values))
    )
    return f"median {median:.2f} s, p95 {p95:.2f} s, max {top:.2f} s"


def _led(args: dict[str, Any], lead: str) -> dict[str, Any]:
    """The same long query with a different head, so no repeat is answered by the embed cache."""
    query = args["query"]
    return {**args, "query": (lead + query[len(lead) :])[: len(query)]}


def latency(
    base: Path, embedder: str, deadline: float, repeats: int, bound: float = 1.0
) -> list[Row]:
    """Each long query `repeats` times on one fresh server per case: once alone (the request's
    own cost, which the bound is about), once while a second client calls `memory_stats` back to
    back. A trial fails when the call alone takes over `bound`, or when the other client waits
    over `bound` (the issue's rule: never longer than the longest capped request)."""
    words = " ".join(WORDS)
    long_words = (words + " ") * (20_000 // (len(words) + 1) + 1)
    cases = [
        (
            "memory_search",
            {"query": long_words[:20_000], "include_turns": True},
            "20,000-char query",
        ),
        ("memo_search", {"query": long_words[:20_000]}, "20,000-char query"),
        (
            "memory_search",
            {"query": NO_SPACES, "mode": "lex", "include_turns": True},
            "1 MB query, no spaces",
        ),
        ("memo_search", {"query": NO_SPACES, "mode": "lex"}, "1 MB query, no spaces"),
    ]
    rows = []
    for i, (tool, args, label) in enumerate(cases):
        root = _library(base / f"lat-{i}")
        proc, url = _start_http(
            base / f"lat-{i}", {"TIDELINE_EMBEDDER": embedder, "MEMO_ROOT": str(root)}
        )
        alone: list[float] = []
        work: list[float] = []
        together: list[float] = []
        waited: list[float] = []
        calls, refused, failed = 0, "", 0
        try:
            anyio.run(_client, url, _seed)
            for r in range(repeats):
                lead = f"{WORDS[r % len(WORDS)]} {WORDS[(r * 7 + 3) % len(WORDS)]} {r} "
                cpu = _cpu_seconds(proc.pid)
                alone.append(anyio.run(_alone_call, url, tool, _led(args, "a " + lead), deadline))
                work.append(_cpu_seconds(proc.pid) - cpu)
                both, wait, n, refused = anyio.run(
                    _long_call, url, tool, _led(args, "b " + lead), deadline
                )
                together.append(both)
                waited.append(wait)
                calls += n
                failed += int(alone[-1] > bound or wait > bound)
                if max(alone[-1], both) >= deadline:
                    break  # the server is still busy with it: later repeats would measure that
        finally:
            proc.kill()  # it may still be busy with the long query
            proc.wait()
        over = max(alone + together) >= deadline
        figure = (
            f"{'> deadline; ' if over else ''}alone {_spread(alone)} ({embedder}; the server's CPU "
            f"time for it {_spread(work)}); with a second "
            f"client calling memory_stats back to back {_spread(together)}, and that client "
            f"waited {_spread(waited)} ({calls:,} calls); bound {bound:.0f} s"
            + (f"; refused: {refused}" if refused else "")
        )
        rows.append(Row(f"long input: {tool}, {label}", len(alone), failed, figure))
    return [*rows, _cli_long_query(base, deadline, bound, repeats)]


def _cli_long_query(base: Path, deadline: float, bound: float, repeats: int) -> Row:
    """`memo search` with the longest argument Linux allows (128 KiB), no spaces, lexical.

    A process pays for its interpreter start-up whatever the query, and on a loaded machine
    that alone can pass a second; so each trial runs the same command with a one-word query
    just before, and the bound applies to the difference (the long query's own cost)."""
    root = _library(base / "lat-cli")
    env = cli_env(base / "lat-cli")
    memo = [str(BIN / "memo"), "search"]
    tail = ["--root", str(root), "--mode", "lex"]
    run([*memo, "warm", *tail], env)  # the first run builds the index
    longs, shorts, extra, failed, said = [], [], [], 0, ""
    for r in range(repeats):
        rng = random.Random(5 + r)
        text = "".join(rng.choices(string.ascii_lowercase, k=131_000))
        short = run([*memo, "lanterns", *tail], env, kill_after=deadline)
        long = run([*memo, text, *tail], env, kill_after=deadline)
        longs.append(deadline if long.killed else long.seconds)
        shorts.append(short.seconds)
        extra.append(longs[-1] - short.seconds)
        failed += int(long.killed or extra[-1] > bound or "Traceback" in long.stderr)
        said = long.stderr.strip().splitlines()[0] if long.stderr.strip() else ""
    figure = (
        f"{_spread(longs)} (exit {long.returncode}); a one-word query run just before "
        f"{_spread(shorts)}; the long query's own cost {_spread(extra)}; bound {bound:.0f} s "
        f"on that cost" + (f"; says: {said}" if said else "")
    )
    return Row(
        "long input: `memo search --mode lex`, 131,000 chars, no spaces",
        len(longs),
        failed,
        figure,
    )
