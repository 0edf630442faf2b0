"""The agent database at scale on SQLite and on PostgreSQL (issue 16), side by side.

Synthetic turns and narratives (sentences from a Zipf vocabulary), random 384-dim unit vectors,
and a planted set: `--planted` turns whose vectors lie near known query vectors while their words
are ordinary, so only the vector side finds them (recall@10 of the planted set measures the
vector index, HNSW or exact). Everything goes through the owners (`RawContext.add_turns`,
`Narratives.insert`, `TextIndex.set_vectors`) and the one retrieval path (`retrieve` with
memory's `TURNS` / `NARRATIVES` policies). No embedder is loaded (no embed lock needed).

Then `--processes` writer processes run for `--seconds` on the PostgreSQL namespace: each
`sync_turn`s its own turns and a stream every process writes too (the same words and time: one
row in the end), with a hybrid search every fifth step; the parent counts what each process was
told was stored, what is there, and the errors.

    .venv/bin/python bench/pg_scale.py --turns 100000 --narratives 10000 --write
    .venv/bin/python bench/pg_scale.py --turns 5000 --narratives 500 --seconds 10   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from _report import machine, ms_stats, write_section

from tideline.app import Tideline
from tideline.config import Settings
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
MAINTENANCE_MEM = "1GB"
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
    return Corpus(
        _sentences(rng, words, turns),
        _sentences(rng, words, narratives),
        turn_vectors,
        _unit(rng, narratives),
        wanted,
        queries,
    )


@dataclass
class Run:
    engine: str
    load_turns_s: float = 0.0
    load_vectors_s: float = 0.0
    load_narratives_s: float = 0.0
    ann_build_s: float | None = None
    rows: list[dict[str, Any]] | None = None


def load(db: Storage, c: Corpus, say: Callable[[str], None]) -> tuple[Run, list[int]]:
    """Turns (sessions of 100), their vectors, narratives and theirs; timed separately."""
    run = Run(db.dialect)
    raw, narratives = RawContext(db), Narratives(db)
    ids: list[int] = []
    began = time.perf_counter()
    for s in range(0, len(c.turns), SESSION_TURNS):
        batch = [
            NewTurn("user" if i % 2 else "assistant", c.turns[i], external_id=f"t{i}")
            for i in range(s, min(s + SESSION_TURNS, len(c.turns)))
        ]
        results, _, _ = raw.add_turns(f"session-{s // SESSION_TURNS}", batch)
        ids += [i for i, _ in results]
        if s % 20_000 == 0:
            say(f"{db.dialect}: {s:,} turns")
        if db.dialect == "postgresql" and s in _ANALYZE_AT:
            db.execute("ANALYZE")  # autovacuum's pass on a table that grew from empty
    run.load_turns_s = time.perf_counter() - began
    for index in (raw.index, narratives.index):
        index.bind_vectors(MODEL, DIM)
        if isinstance(index, PgTextIndex):
            index.set_ann(False)  # bulk load first, build the graph once after
    began = time.perf_counter()
    for s in range(0, len(ids), 1000):
        raw.index.set_vectors(zip(ids[s : s + 1000], c.turn_vectors[s : s + 1000], strict=True))
    run.load_vectors_s = time.perf_counter() - began
    began = time.perf_counter()
    nids: list[int] = []
    for s in range(0, len(c.narratives), 500):
        with db.transaction():
            for text in c.narratives[s : s + 500]:
                nids.append(narratives.insert(NarrativeInput(gesture=text[:500]).validated()))
    narratives.index.set_vectors(zip(nids, c.narrative_vectors, strict=True))
    run.load_narratives_s = time.perf_counter() - began
    return run, ids


def measure(db: Storage, c: Corpus, ids: list[int], label: str, queries: int) -> dict[str, Any]:
    """Hybrid p50/p95 on turns and on narratives, and recall@10 of the planted turns (vec)."""
    raw, narratives = RawContext(db), Narratives(db)
    rng = np.random.default_rng(7)

    def timed(index: TextIndex, policy: Policy) -> list[float]:
        out = []
        for n in range(queries):
            qvec = _unit(rng, 1)[0]
            began = time.perf_counter()
            retrieve(Scope(index), c.queries[n % len(c.queries)], qvec, 10, "hybrid", policy).top(
                10
            )
            out.append(time.perf_counter() - began)
        return out

    timed(raw.index, TURNS)  # warm-up (caches, the numpy copy on SQLite)
    turns = ms_stats(timed(raw.index, TURNS))
    narr = ms_stats(timed(narratives.index, NARRATIVES))
    found = 0
    for position, qvec in c.planted.items():
        hits = retrieve(Scope(raw.index), "x", qvec, 10, "vec", TURNS).top(10)
        found += ids[position] in {h.id for h in hits}
    return {
        "label": label,
        "turns_p50": turns[0],
        "turns_p95": turns[1],
        "narr_p50": narr[0],
        "narr_p95": narr[1],
        "recall": found / max(1, len(c.planted)),
    }


# -- the concurrent writers ------------------------------------------------------------------
def worker(url: str, agent: str, seconds: float, me: int) -> None:
    """One writer process (see the module docstring); prints its tally as JSON."""
    settings = Settings.load(
        overrides={"database_url": url, "agent_name": agent, "embedder": "none"}
    )
    app = Tideline(settings)
    rng = np.random.default_rng(me)
    acked: list[int] = []
    stream_ticks = 0
    errors: list[str] = []
    writes: list[float] = []
    searches: list[float] = []
    deadline = time.monotonic() + seconds
    step = 0
    try:
        while time.monotonic() < deadline:
            try:
                began = time.perf_counter()
                r = app.memory.sync_turn(
                    f"writer-{me}", "user", f"writer {me} step {step}", external_id=f"w{me}-{step}"
                )
                stamp = f"2026-12-01T{step // 3600:02d}:{step // 60 % 60:02d}:{step % 60:02d}Z"
                app.memory.sync_turn("stream", "user", f"tick {step}", timestamp=stamp)
                writes.append(time.perf_counter() - began)
                if r.created:
                    acked.append(r.id)
                stream_ticks = step + 1
                if step % 5 == 0:
                    began = time.perf_counter()
                    retrieve(
                        Scope(app.memory.raw.index),
                        "writer step",
                        _unit(rng, 1)[0],
                        10,
                        "hybrid",
                        TURNS,
                    ).top(10)
                    searches.append(time.perf_counter() - began)
            except Exception as exc:  # counted and shown: the target is zero
                errors.append(f"{type(exc).__name__}: {exc}")
            step += 1
    finally:
        app.close()
    print(
        json.dumps(
            {
                "acked": acked,
                "ticks": stream_ticks,
                "errors": errors[:5],
                "error_count": len(errors),
                "write_ms": ms_stats(writes),
                "search_ms": ms_stats(searches),
            }
        )
    )


def concurrency(url: str, agent: str, processes: int, seconds: float) -> dict[str, Any]:
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", url, agent, str(seconds), str(w)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(processes)
    ]
    tallies = [json.loads(p.communicate(timeout=seconds + 300)[0]) for p in procs]
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
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        url, agent, seconds, me = args.worker
        worker(url, agent, float(seconds), int(me))
        return

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    c = corpus(args.turns, args.narratives, args.planted)
    work = Path(tempfile.mkdtemp(prefix="tideline-pg-bench-"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgserver: no XDG_RUNTIME_DIR here
        import pgserver

        server = pgserver.get_server(work / "pg", "delete")
    url = server.get_uri()
    # an operator's setting for building HNSW: the graph of 100k 384-dim vectors needs ~200 MB
    # (the default 64 MB spills to disk and the build took over 13 minutes here)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER SYSTEM SET maintenance_work_mem = '{MAINTENANCE_MEM}'")
        conn.execute("SELECT pg_reload_conf()")
    runs: list[Run] = []
    try:
        lite = open_database(work / "memory.db", AGENT_MIGRATIONS)
        run, ids = load(lite, c, say)
        run.rows = [measure(lite, c, ids, "SQLite (exact KNN, numpy)", args.queries)]
        lite.close()
        runs.append(run)
        say(f"sqlite done: {run}")

        pg = open_postgres(url, Namespace("bench"), AGENT_MIGRATIONS)
        run, ids = load(pg, c, say)
        pg.execute("ANALYZE")  # what autovacuum does soon after a load: fresh planner statistics
        exact = measure(pg, c, ids, "PostgreSQL, no HNSW (exact scan)", args.queries)
        began = time.perf_counter()
        for index in (RawContext(pg).index, Narratives(pg).index):
            assert isinstance(index, PgTextIndex)
            index.set_ann(True)
        run.ann_build_s = time.perf_counter() - began
        run.rows = [
            exact,
            measure(pg, c, ids, "PostgreSQL, HNSW (m=16, ef_search=40)", args.queries),
        ]
        pg.close()
        runs.append(run)
        say(f"postgresql done: {run}")
        say(f"{args.processes} writers for {args.seconds:g} s")
        conc = concurrency(url, "bench", args.processes, args.seconds)
        say(json.dumps(conc))
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    body = report(args, runs, conc, load_before, load_after)
    print(body)
    if args.write:
        write_section("pg-scale", body)


def report(
    args: argparse.Namespace,
    runs: list[Run],
    conc: dict[str, Any],
    before: tuple[float, float, float],
    after: tuple[float, float, float],
) -> str:
    lines = [
        "## PostgreSQL + pgvector vs SQLite at scale (bench/pg_scale.py)",
        "",
        f"{args.turns:,} turns (sessions of {SESSION_TURNS}), {args.narratives:,} narratives,"
        f" random {DIM}-dim unit vectors, {len(runs[0].rows or []) and args.planted} planted turns;"
        f" {args.queries} hybrid queries per row (`retrieve`, k=10, memory's policies)."
        f" PostgreSQL 16.2 + pgvector 0.6.2 from the pgserver wheel, default durability"
        f" (fsync on), maintenance_work_mem {MAINTENANCE_MEM} for the HNSW build, one namespace. Machine: {machine()}; load average"
        f" {before[0]:.2f} before, {after[0]:.2f} after (shared with other engineers' runs).",
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
        "| search | turns hybrid p50 ms | p95 ms | narratives hybrid p50 ms | p95 ms | planted recall@10 (vec) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        for row in r.rows or []:
            lines.append(
                f"| {row['label']} | {row['turns_p50']} | {row['turns_p95']} | {row['narr_p50']}"
                f" | {row['narr_p95']} | {row['recall']:.2f} |"
            )
    writes = " · ".join(f"{m[0]}/{m[1]}" for m in conc["write_ms"])
    searches = " · ".join(f"{m[0]}/{m[1]}" for m in conc["search_ms"])
    lines += [
        "",
        f"**{conc['processes']} writer processes, {conc['seconds']:g} s** on the loaded namespace"
        f" (each: its own `sync_turn`s plus a stream all of them write, a hybrid search every"
        f" fifth step): {conc['writes']:,} writes acknowledged"
        f" ({conc['writes'] / conc['seconds']:,.0f}/s), **{conc['lost']} lost**;"
        f" the shared stream has {conc['stream_rows']:,} rows for {conc['stream_ticks']:,}"
        f" ticks (**{conc['stream_duplicates']} duplicated**); **{conc['errors']} errors**."
        f" Per process, write (both `sync_turn`s) p50/p95 ms: {writes}; search p50/p95 ms:"
        f" {searches}.",
    ]
    if conc["error_lines"]:
        lines.append(f"First errors: {conc['error_lines']}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
