"""The agent database at scale on SQLite and on PostgreSQL (issue 16), side by side.

Synthetic turns and narratives (sentences from a Zipf vocabulary), random 384-dim unit vectors,
and a planted set: `--planted` turns whose vectors lie near known query vectors while their words
are ordinary, so only the vector side finds them (recall@10 of the planted set measures the
vector index, HNSW or exact). Turn `i` is dated `i` seconds after 2025-01-01, so a time window
is a known slice of the turns: the filtered vector search (`RawContext.filter`) is checked
against numpy's exact answer over that slice. Substring queries (a fragment inside a rare word,
which no tsvector / FTS5 term matches) time the substring side: SQLite's trigram table against
PostgreSQL's `strpos` scan (the pgserver build has no pg_trgm). Everything goes through the
owners (`RawContext.add_turns` in transactions of `LOAD_SESSIONS` sessions, `Narratives.insert`,
`TextIndex.set_vectors`) and the one retrieval path (`retrieve` with memory's `TURNS` /
`NARRATIVES` policies). No embedder is loaded.

Then `--processes` `tideline serve --transport http` processes run on the PostgreSQL namespace
(no embedder: the bench's vectors are random), each driven for `--seconds` by its own client
process over the REST API: `POST /api/turns` for its own turns and for a stream every client
writes too (the same words and time: one row in the end), `GET /api/search` (turns included)
every fifth step; the parent counts what each client was told was stored, what is there, and
the errors.

    flock /work/embed.lock .venv/bin/python bench/pg_scale.py --turns 1000000 --narratives 100000 --queries 100 --write
    .venv/bin/python bench/pg_scale.py --turns 5000 --narratives 500 --seconds 10   # a smoke run
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
from _report import machine, ms_stats, write_section

from tideline.memory import (
    AGENT_MIGRATIONS,
    NARRATIVES,
    TURNS,
    NarrativeInput,
    Narratives,
    NewTurn,
    RawContext,
)
from tideline.search import PgTextIndex, Policy, Scope, TextIndex, retrieve
from tideline.store import Namespace, Storage, open_database, open_postgres

DIM = 384
SESSION_TURNS = 100
MODEL = "bench-random-unit"
#: Sessions per load transaction (a commit per 5,000 turns, not per 100).
LOAD_SESSIONS = 50
#: Turn `i` is said at START + i seconds.
START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
#: Time windows for the filtered vector search, as shares of the turns.
WINDOWS = (0.02, 0.002)
#: Turns loaded when the bench refreshes PostgreSQL's statistics: the plans psycopg prepares
#: (after five runs of a statement) are made for an empty table until ANALYZE, and autovacuum's
#: first pass comes a minute after the load began (lexical_keys went 3 → 325 ms over 10k turns).
_ANALYZE_AT = {1_000, 10_000, 100_000}


def _vocabulary(rng: np.random.Generator, size: int = 20_000) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(size)]


def _sentences(rng: np.random.Generator, words: list[str], n: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.2, size=(n, 24)), len(words)) - 1
    lengths = rng.integers(6, 24, size=n)
    return [
        " ".join(words[r] for r in row[:length]) for row, length in zip(ranks, lengths, strict=True)
    ]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@dataclass
class Corpus:
    turns: list[str]
    narratives: list[str]
    turn_vectors: np.ndarray
    narrative_vectors: np.ndarray
    planted: dict[int, np.ndarray]  # turn position -> its query vector
    queries: list[str]
    substrings: list[str]


def corpus(turns: int, narratives: int, planted: int, seed: int = 16) -> Corpus:
    rng = np.random.default_rng(seed)
    words = _vocabulary(rng)
    turn_vectors = _unit(rng, turns)
    targets = rng.choice(turns, size=min(planted, turns), replace=False)
    wanted: dict[int, np.ndarray] = {}
    for t in targets:
        q = _unit(rng, 1)[0]
        near = q + 0.35 * _unit(rng, 1)[0]
        turn_vectors[t] = near / np.linalg.norm(near)
        wanted[int(t)] = q
    queries = [" ".join(s.split()[:4]) for s in _sentences(rng, words, 200)]
    # the inside of a word of Zipf rank 1,000-5,000 (5+ letters): no whole term matches it
    rare = [w for w in words[1000:5000] if len(w) >= 7]
    substrings = [w[1:6] for w in rare[:50]]
    return Corpus(
        _sentences(rng, words, turns),
        _sentences(rng, words, narratives),
        turn_vectors,
        _unit(rng, narratives),
        wanted,
        queries,
        substrings,
    )


def said_at(position: int) -> str:
    return (START + dt.timedelta(seconds=position)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Run:
    engine: str
    load_turns_s: float = 0.0
    load_vectors_s: float = 0.0
    load_narratives_s: float = 0.0
    ann_build_s: float | None = None
    rows: list[dict[str, Any]] | None = None


def load(db: Storage, c: Corpus, say: Callable[[str], None]) -> tuple[Run, list[int]]:
    """Turns (sessions of 100, `LOAD_SESSIONS` to a transaction), their vectors, narratives and
    theirs; timed separately."""
    run = Run(db.dialect)
    raw, narratives = RawContext(db), Narratives(db)
    ids: list[int] = []
    began = time.perf_counter()
    step = SESSION_TURNS * LOAD_SESSIONS
    for start in range(0, len(c.turns), step):
        with db.transaction():
            for s in range(start, min(start + step, len(c.turns)), SESSION_TURNS):
                batch = [
                    NewTurn(
                        "user" if i % 2 else "assistant",
                        c.turns[i],
                        timestamp=said_at(i),
                        external_id=f"t{i}",
                    )
                    for i in range(s, min(s + SESSION_TURNS, len(c.turns)))
                ]
                results, _, _ = raw.add_turns(f"session-{s // SESSION_TURNS}", batch)
                ids += [i for i, _ in results]
                if db.dialect == "postgresql" and len(ids) in _ANALYZE_AT:
                    db.execute("ANALYZE")  # autovacuum's pass on a table that grew from empty
        if start % 50_000 == 0:
            rate = len(ids) / (time.perf_counter() - began)
            say(f"{db.dialect}: {len(ids):,} turns ({rate:,.0f}/s)")
    run.load_turns_s = time.perf_counter() - began
    for index in (raw.index, narratives.index):
        index.bind_vectors(MODEL, DIM)
        if isinstance(index, PgTextIndex):
            index.set_ann(False)  # bulk load first, build the graph once after
    began = time.perf_counter()
    for s in range(0, len(ids), 1000):
        raw.index.set_vectors(zip(ids[s : s + 1000], c.turn_vectors[s : s + 1000], strict=True))
    run.load_vectors_s = time.perf_counter() - began
    say(f"{db.dialect}: vectors in {run.load_vectors_s:.0f} s")
    began = time.perf_counter()
    nids: list[int] = []
    for s in range(0, len(c.narratives), 500):
        with db.transaction():
            for text in c.narratives[s : s + 500]:
                nids.append(narratives.insert(NarrativeInput(gesture=text[:500]).validated()))
    for s in range(0, len(nids), 1000):
        narratives.index.set_vectors(
            zip(nids[s : s + 1000], c.narrative_vectors[s : s + 1000], strict=True)
        )
    run.load_narratives_s = time.perf_counter() - began
    say(f"{db.dialect}: narratives in {run.load_narratives_s:.0f} s")
    return run, ids


def timed(call: Callable[[int], object], n: int) -> list[float]:
    """Seconds per call of `call(i)` for i in range(n)."""
    out = []
    for i in range(n):
        began = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - began)
    return out


def filtered(db: Storage, c: Corpus, ids: list[int], queries: int) -> list[dict[str, Any]]:
    """Vector search inside a time window (a known slice of the turns), against numpy's exact
    answer over that slice: records returned per query (k = 10) and recall@10, p50/p95."""
    raw = RawContext(db)
    rng = np.random.default_rng(11)
    out = []
    for share in WINDOWS:
        first = int(len(ids) * 0.4)
        last = first + max(10, int(len(ids) * share))
        where = raw.filter(said_at(first), said_at(last - 1))
        inside = c.turn_vectors[first:last]
        qs = _unit(rng, queries)
        got: list[list[int]] = []
        seconds: list[float] = []
        for q in qs:
            began = time.perf_counter()
            hits = retrieve(where, "x", q, 10, "vec", TURNS).top(10)
            seconds.append(time.perf_counter() - began)
            got.append([h.id for h in hits])
        stats = ms_stats(seconds)
        recall = []
        for q, hits in zip(qs, got, strict=True):
            truth = {ids[first + j] for j in np.argsort(-(inside @ q))[:10]}
            recall.append(len(truth & set(hits)) / 10)
        out.append(
            {
                "share": share,
                "rows": last - first,
                "p50": stats[0],
                "p95": stats[1],
                "returned": float(np.mean([len(g) for g in got])),
                "recall": float(np.mean(recall)),
            }
        )
    return out


def measure(db: Storage, c: Corpus, ids: list[int], label: str, queries: int) -> dict[str, Any]:
    """Hybrid p50/p95 on turns and on narratives, recall@10 of the planted turns (vec), the
    filtered vector search, and substring queries (lexical)."""
    raw, narratives = RawContext(db), Narratives(db)
    rng = np.random.default_rng(7)

    def hybrid(index: TextIndex, policy: Policy) -> Callable[[int], object]:
        return lambda n: retrieve(
            Scope(index), c.queries[n % len(c.queries)], _unit(rng, 1)[0], 10, "hybrid", policy
        ).top(10)

    timed(hybrid(raw.index, TURNS), 10)  # warm-up (caches, the numpy copy on SQLite)
    turns = ms_stats(timed(hybrid(raw.index, TURNS), queries))
    narr = ms_stats(timed(hybrid(narratives.index, NARRATIVES), queries))
    found = 0
    for position, qvec in c.planted.items():
        hits = retrieve(Scope(raw.index), "x", qvec, 10, "vec", TURNS).top(10)
        found += ids[position] in {h.id for h in hits}
    subs = timed(
        lambda n: retrieve(
            Scope(raw.index), c.substrings[n % len(c.substrings)], None, 10, "lex", TURNS
        ).top(10),
        min(queries, len(c.substrings)),
    )
    return {
        "label": label,
        "turns_p50": turns[0],
        "turns_p95": turns[1],
        "narr_p50": narr[0],
        "narr_p95": narr[1],
        "recall": found / max(1, len(c.planted)),
        "substr": ms_stats(subs),
        "filtered": filtered(db, c, ids, min(queries, 50)),
    }


# -- the concurrent servers --------------------------------------------------------------------
def client(base: str, seconds: float, me: int) -> None:
    """One client of one server (see the module docstring); prints its tally as JSON."""
    acked: list[int] = []
    stream_ticks = 0
    errors: list[str] = []
    writes: list[float] = []
    searches: list[float] = []
    deadline = time.monotonic() + seconds
    step = 0
    with httpx.Client(base_url=base, timeout=60) as http:
        while time.monotonic() < deadline:
            try:
                began = time.perf_counter()
                own = http.post(
                    "/api/turns",
                    json={
                        "session": f"writer-{me}",
                        "role": "user",
                        "text": f"writer {me} step {step}",
                    },
                )
                own.raise_for_status()
                stamp = f"2026-12-01T{step // 3600:02d}:{step // 60 % 60:02d}:{step % 60:02d}Z"
                http.post(
                    "/api/turns",
                    json={
                        "session": "stream",
                        "role": "user",
                        "text": f"tick {step}",
                        "timestamp": stamp,
                    },
                ).raise_for_status()
                writes.append(time.perf_counter() - began)
                if own.json()["created"]:
                    acked.append(int(own.json()["id"]))
                stream_ticks = step + 1
                if step % 5 == 0:
                    began = time.perf_counter()
                    http.get(
                        "/api/search",
                        params={"query": "writer step", "k": 10, "include_turns": "true"},
                    ).raise_for_status()
                    searches.append(time.perf_counter() - began)
            except Exception as exc:  # counted and shown: the target is zero
                errors.append(f"{type(exc).__name__}: {exc}")
            step += 1
    print(
        json.dumps(
            {
                "acked": acked,
                "ticks": stream_ticks,
                "errors": errors[:5],
                "error_count": len(errors),
                "write_ms": ms_stats(writes) if writes else ("-", "-"),
                "search_ms": ms_stats(searches) if searches else ("-", "-"),
            }
        )
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(url: str, agent: str, home: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`tideline serve --transport http` on the namespace, ready (its stats answer)."""
    port = _free_port()
    env = {
        **os.environ,
        "TIDELINE_DATABASE_URL": url,
        "AGENT_NAME": agent,
        "TIDELINE_EMBEDDER": "none",
        "TIDELINE_HOME": str(home),
    }
    log = (home / f"serve-{port}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tideline", "serve", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"tideline serve exited {proc.returncode}; see {log.name}")
        try:
            if httpx.get(f"{base}/api/stats", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)  # a bench polling a process it started (tests use wait_until)
    raise SystemExit(f"tideline serve on port {port} did not answer in 120 s; see {log.name}")


def concurrency(url: str, agent: str, processes: int, seconds: float, home: Path) -> dict[str, Any]:
    servers = [serve(url, agent, home) for _ in range(processes)]
    try:
        clients = [
            subprocess.Popen(
                [sys.executable, __file__, "--client", base, str(seconds), str(w)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for w, (_, base) in enumerate(servers)
        ]
        tallies = [json.loads(p.communicate(timeout=seconds + 300)[0]) for p in clients]
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(timeout=60)
    db = open_postgres(url, Namespace(agent), AGENT_MIGRATIONS)
    try:
        raw = RawContext(db)
        acked = [i for t in tallies for i in t["acked"]]
        present = {t.id for t in raw.get(acked)}
        sid = raw.session_id("stream")
        stream = raw.session_turns(sid) if sid is not None else []
    finally:
        db.close()
    ticks = max(t["ticks"] for t in tallies)
    return {
        "processes": processes,
        "seconds": seconds,
        "writes": len(acked),
        "lost": len(acked) - len(present),
        "stream_rows": len(stream),
        "stream_ticks": ticks,
        "stream_duplicates": len(stream) - len({t.text for t in stream}),
        "errors": sum(t["error_count"] for t in tallies),
        "error_lines": [e for t in tallies for e in t["errors"]][:3],
        "write_ms": [t["write_ms"] for t in tallies],
        "search_ms": [t["search_ms"] for t in tallies],
    }


# -- the run -----------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=100_000)
    ap.add_argument("--narratives", type=int, default=10_000)
    ap.add_argument("--planted", type=int, default=100)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--write", action="store_true", help="write docs/benchmarks.md (pg-scale)")
    ap.add_argument("--client", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        base, seconds, me = args.client
        client(base, float(seconds), int(me))
        return

    def say(line: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    c = corpus(args.turns, args.narratives, args.planted)
    say("corpus made")
    work = Path(tempfile.mkdtemp(prefix="tideline-pg-bench-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgserver: no XDG_RUNTIME_DIR here
        import pgserver

        server = pgserver.get_server(work / "pg", "delete")
    url = server.get_uri()
    # an operator's setting for building HNSW: the graph of 100k 384-dim vectors needs ~200 MB
    # (the default 64 MB spills to disk and the build took over 13 minutes here)
    memory = f"{max(1, math.ceil(args.turns / 250_000))}GB"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET maintenance_work_mem = '{memory}'")
        conn.execute("SELECT pg_reload_conf()")
    runs: list[Run] = []
    try:
        lite = open_database(work / "memory.db", AGENT_MIGRATIONS)
        run, ids = load(lite, c, say)
        run.rows = [
            measure(lite, c, ids, "SQLite (exact KNN: numpy; filtered: sqlite-vec)", args.queries)
        ]
        lite.close()
        runs.append(run)
        say(f"sqlite done: {json.dumps(run.__dict__)}")

        pg = open_postgres(url, Namespace("bench"), AGENT_MIGRATIONS)
        run, ids = load(pg, c, say)
        pg.execute("ANALYZE")  # what autovacuum does soon after a load: fresh planner statistics
        exact = measure(pg, c, ids, "PostgreSQL, no HNSW (exact scan)", args.queries)
        say(f"postgresql exact: {json.dumps(exact)}")
        began = time.perf_counter()
        for index in (RawContext(pg).index, Narratives(pg).index):
            assert isinstance(index, PgTextIndex)
            index.set_ann(True)
        run.ann_build_s = time.perf_counter() - began
        say(f"HNSW built in {run.ann_build_s:.0f} s")
        run.rows = [
            exact,
            measure(pg, c, ids, "PostgreSQL, HNSW (m=16, ef_search=40)", args.queries),
        ]
        pg.close()
        runs.append(run)
        say(f"postgresql done: {json.dumps(run.__dict__)}")
        say(f"{args.processes} servers for {args.seconds:g} s")
        conc = concurrency(url, "bench", args.processes, args.seconds, work)
        say(json.dumps(conc))
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    body = report(args, runs, conc, memory, load_before, load_after)
    print(body)
    if args.write:
        write_section("pg-scale", body)


def report(
    args: argparse.Namespace,
    runs: list[Run],
    conc: dict[str, Any],
    memory: str,
    before: tuple[float, float, float],
    after: tuple[float, float, float],
) -> str:
    command = " ".join(["bench/pg_scale.py", *sys.argv[1:]])
    lines = [
        "## PostgreSQL + pgvector vs SQLite at scale (bench/pg_scale.py)",
        "",
        f"{args.turns:,} turns (sessions of {SESSION_TURNS}), {args.narratives:,} narratives,"
        f" random {DIM}-dim unit vectors, {args.planted} planted turns;"
        f" {args.queries} hybrid queries per row (`retrieve`, k=10, memory's policies)."
        f" PostgreSQL 16.2 + pgvector 0.6.2 from the pgserver wheel, default durability"
        f" (fsync on), maintenance_work_mem {memory} for the HNSW build, one namespace."
        f" Machine: {machine()}; load average {before[0]:.2f} before, {after[0]:.2f} after"
        f" (shared with other engineers' runs). Command: `{command}`.",
        "",
        "| engine | load turns/s | load vectors/s | narratives/s | HNSW build s |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in runs:
        lines.append(
            f"| {r.engine} | {args.turns / r.load_turns_s:,.0f} | {args.turns / r.load_vectors_s:,.0f}"
            f" | {args.narratives / r.load_narratives_s:,.0f}"
            f" | {'—' if r.ann_build_s is None else f'{r.ann_build_s:.1f}'} |"
        )
    lines += [
        "",
        "| search | turns hybrid p50 ms | p95 ms | narratives hybrid p50 ms | p95 ms | planted recall@10 (vec) | substring (lex) p50 / p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [row for r in runs for row in r.rows or []]
    for row in rows:
        lines.append(
            f"| {row['label']} | {row['turns_p50']} | {row['turns_p95']} | {row['narr_p50']}"
            f" | {row['narr_p95']} | {row['recall']:.2f} | {row['substr'][0]} / {row['substr'][1]} |"
        )
    lines += [
        "",
        "Vector search inside a time window (`RawContext.filter`, k=10), against numpy's exact"
        " answer over the window's turns:",
        "",
        "| search | window | p50 ms | p95 ms | records returned (of 10) | recall@10 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        for f in row["filtered"]:
            lines.append(
                f"| {row['label']} | {f['share']:.1%} ({f['rows']:,} turns) | {f['p50']}"
                f" | {f['p95']} | {f['returned']:.1f} | {f['recall']:.2f} |"
            )
    writes = " · ".join(f"{m[0]}/{m[1]}" for m in conc["write_ms"])
    searches = " · ".join(f"{m[0]}/{m[1]}" for m in conc["search_ms"])
    lines += [
        "",
        f"**{conc['processes']} `tideline serve` processes, {conc['seconds']:g} s** on the"
        f" loaded namespace, each driven by its own client over the REST API (its own turns plus"
        f" a stream all of them write, a search with turns every fifth step):"
        f" {conc['writes']:,} writes acknowledged"
        f" ({conc['writes'] / conc['seconds']:,.0f}/s, plus as many stream writes),"
        f" **{conc['lost']} lost**; the shared stream has {conc['stream_rows']:,} rows for"
        f" {conc['stream_ticks']:,} ticks (**{conc['stream_duplicates']} duplicated**);"
        f" **{conc['errors']} errors**. Per client, write (both requests) p50/p95 ms: {writes};"
        f" search p50/p95 ms: {searches}.",
    ]
    if conc["error_lines"]:
        lines.append(f"First errors: {conc['error_lines']}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
