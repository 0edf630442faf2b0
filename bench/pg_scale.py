"""The agent database at a million turns, on SQLite and on PostgreSQL (issues 16 and 25).

Turns carry real text and real vectors: turn `i` says the `i mod T`-th of the cached texts
(`bench/_scale_texts.py`: every LoCoMo turn and tldr lines, T ≥ 30,000 distinct) and its vector
is that text's e5 vector moved by noise of norm 0.15–0.45 — a million vectors with the cluster
structure of real embeddings (`--vectors random`: uniform unit vectors instead, the worst case
for a graph). Narratives likewise. Queries are LoCoMo's questions of the four answerable kinds,
with their e5 vectors. Turn `i` is said `i` seconds after 2025-01-01, so a time window is a known
slice of the turns.

On SQLite: the load (through the owners), the vector and lexical files' builds, then searches
through the product's own path (`Memory.search_turns` with the bundled e5 embedding each query
live, the product's policies and levers), the same with the query vector given, vector search
alone (recall@10 against numpy's exact answer over every turn), narratives, vector and hybrid
searches inside a 2% and a 0.2% time window; a `tideline serve` process answering REST searches
(its RSS after them) and `tideline search` from process start to exit. On PostgreSQL: `tideline
migrate` of that database (the copy and its HNSW build, timed), the same searches, then
`--processes` `tideline serve` processes on the namespace for `--seconds`, each driven by its own
client over REST: its own turns, a stream all of them write, a search every fifth step — the
parent counts what each was told was stored, what is there, and the errors.

Every phase appends its numbers to `--results` (JSON lines), so a run cut short keeps what it
measured and `--report-only` writes the tables from them.

    flock /work/embed.lock .venv/bin/python bench/pg_scale.py --turns 1000000 --narratives 100000 --write
    .venv/bin/python bench/pg_scale.py --turns 20000 --narratives 2000 --seconds 10  # a smoke run
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
from _report import machine, ms_stats, write_section

from tideline.app import Tideline
from tideline.clock import system_clock
from tideline.config import Settings
from tideline.embed import E5Embedder
from tideline.memory import (
    AGENT_MIGRATIONS,
    NarrativeInput,
    Narratives,
    NewTurn,
    RawContext,
)
from tideline.search import PgTextIndex, Scope, TextIndex, retrieve
from tideline.store import Namespace, open_database, open_postgres

CACHE = Path(os.environ.get("TIDELINE_BENCH_CACHE", "/work/cache")) / "scale-texts.npz"
DIM = 384
SESSION_TURNS = 100
LOAD_SESSIONS = 50
START = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
WINDOWS = (0.02, 0.002)
_ANALYZE_AT = {1_000, 10_000, 100_000}
AGENT = "bench"
TIDELINE = (sys.executable, "-m", "tideline")


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def said_at(position: int) -> str:
    return (START + dt.timedelta(seconds=position)).strftime("%Y-%m-%dT%H:%M:%SZ")


class Corpus:
    """The cached texts and vectors, replicated: `text(i)`, `vectors(a, b)` (rows a..b-1)."""

    def __init__(self, kind: str, seed: int = 25, path: Path = CACHE):
        data = np.load(path)
        self.kind = kind
        self.texts = [str(t) for t in data["texts"]]
        self.base = data["vectors"].astype(np.float32)
        self.queries = [str(q) for q in data["queries"]]
        self.query_kinds = [str(k) for k in data["query_kinds"]]
        self.query_vectors = data["query_vectors"].astype(np.float32)
        self.seed = seed
        if kind == "random":
            rng = np.random.default_rng(seed + 1)
            self.query_vectors = unit(rng.standard_normal(self.query_vectors.shape))

    def text(self, i: int) -> str:
        return self.texts[i % len(self.texts)]

    def vectors(self, a: int, b: int, salt: int = 0) -> np.ndarray:
        rng = np.random.default_rng((self.seed, salt, a))
        if self.kind == "random":
            return unit(rng.standard_normal((b - a, DIM)))
        idx = np.arange(a, b) % len(self.base)
        noise = unit(rng.standard_normal((b - a, DIM)))
        scale = rng.uniform(0.15, 0.45, size=(b - a, 1)).astype(np.float32)
        return unit(self.base[idx] + scale * noise)


def record(path: Path, phase: str, **data: Any) -> dict[str, Any]:
    row = {"phase": phase, "at": time.strftime("%H:%M:%S"), "load": os.getloadavg()[0], **data}
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def timed(call: Callable[[int], object], n: int, cpu: list[float] | None = None) -> list[float]:
    """Each call's wall seconds; with `cpu`, its CPU seconds in this process (every thread)
    are appended there: on a loaded machine the wall time is mostly waiting for a core."""
    out = []
    for i in range(n):
        began, used = time.perf_counter(), time.process_time()
        call(i)
        out.append(time.perf_counter() - began)
        if cpu is not None:
            cpu.append(time.process_time() - used)
    return out


# -- load ----------------------------------------------------------------------------------------
def load_sqlite(
    path: Path, c: Corpus, turns: int, narratives: int, say: Callable[[str], None]
) -> dict[str, Any]:
    db = open_database(path, AGENT_MIGRATIONS)
    raw, narr = RawContext(db, clock=system_clock), Narratives(db, clock=system_clock)
    out: dict[str, Any] = {}
    began = time.perf_counter()
    step = SESSION_TURNS * LOAD_SESSIONS
    ids: list[int] = []
    for start in range(0, turns, step):
        with db.transaction():
            for s in range(start, min(start + step, turns), SESSION_TURNS):
                batch = [
                    NewTurn(
                        "user" if i % 2 else "assistant",
                        c.text(i),
                        timestamp=said_at(i),
                        external_id=f"t{i}",
                    )
                    for i in range(s, min(s + SESSION_TURNS, turns))
                ]
                results, _, _ = raw.add_turns(f"session-{s // SESSION_TURNS}", batch)
                ids += [i for i, _ in results]
        if start % 100_000 == 0:
            say(f"sqlite: {len(ids):,} turns ({len(ids) / (time.perf_counter() - began):,.0f}/s)")
    out["turns_s"] = time.perf_counter() - began
    model = E5Embedder.model_id
    raw.index.bind_vectors(model, DIM)
    narr.index.bind_vectors(model, DIM)
    began = time.perf_counter()
    for s in range(0, len(ids), 2000):
        part = ids[s : s + 2000]
        raw.index.set_vectors(zip(part, c.vectors(s, s + len(part)), strict=True))
    out["vectors_s"] = time.perf_counter() - began
    say(f"sqlite: turn vectors in {out['vectors_s']:.0f} s")
    began = time.perf_counter()
    nids: list[int] = []
    for s in range(0, narratives, 500):
        with db.transaction():
            for n in range(s, min(s + 500, narratives)):
                text = c.text(n * 7 + 3)[:500]
                nids.append(narr.insert(NarrativeInput(gesture=text).validated()))
    for s in range(0, len(nids), 2000):
        part = nids[s : s + 2000]
        narr.index.set_vectors(zip(part, c.vectors(s, s + len(part), salt=1), strict=True))
    out["narratives_s"] = time.perf_counter() - began
    say(f"sqlite: narratives in {out['narratives_s']:.0f} s")
    db.close()
    return out


def build_files(path: Path, say: Callable[[str], None]) -> dict[str, Any]:
    """The vector and lexical files, each timed (what `tideline embed` does at its end)."""
    db = open_database(path, AGENT_MIGRATIONS)
    raw, narr = RawContext(db, clock=system_clock), Narratives(db, clock=system_clock)
    out: dict[str, Any] = {}
    for name, index in (("turns", raw.index), ("narratives", narr.index)):
        began = time.perf_counter()
        index.configure(replace(index.options, file_min=0))
        assert index.vector_file().build(threads=2)
        out[f"{name}_vector_file_s"] = time.perf_counter() - began
        began = time.perf_counter()
        assert index.build_lexical_file()
        out[f"{name}_lexical_file_s"] = time.perf_counter() - began
        say(f"sqlite: {name} files built")
    db.close()
    sizes = {}
    for folder in (path.with_name(path.name + ".vectors"), path.with_name(path.name + ".lexical")):
        sizes[folder.name] = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20
    out["file_mb"] = sizes
    out["db_mb"] = path.stat().st_size / 2**20
    return out


# -- searches ------------------------------------------------------------------------------------
def app_for(home: Path, url: str = "", *, fresh_cache: bool = False) -> Tideline:
    """The agent on `home` (and `url`); `fresh_cache`: with an empty embedding cache, so each
    query the product path is asked is embedded by e5 then and there, as a new question is."""
    overrides: dict[str, Any] = {"home": str(home), "agent_name": AGENT}
    if url:
        overrides["database_url"] = url
    if fresh_cache:
        cache = home / "embed-cache-fresh.db"
        for old in home.glob(f"{cache.name}*"):
            old.unlink()
        overrides["cache_path"] = str(cache)
    return Tideline(Settings.load(overrides=overrides))


def exact_top(
    c: Corpus, turns: int, q: np.ndarray, first: int = 0, last: int | None = None
) -> list[int]:
    """Positions of the 10 nearest turns (numpy over every vector, in slices)."""
    last = turns if last is None else last
    best: list[tuple[float, int]] = []
    for a in range(first, last, 200_000):
        b = min(last, a + 200_000)
        sims = _slice(c, a, b) @ q
        top = np.argpartition(-sims, min(10, len(sims) - 1))[:10]
        best += [(float(sims[j]), a + int(j)) for j in top]
    return [p for _, p in sorted(best, reverse=True)[:10]]


_SLICES: dict[tuple[int, int], np.ndarray] = {}


def _slice(c: Corpus, a: int, b: int) -> np.ndarray:
    """The turn vectors a..b-1 as loaded (in the load's batches of 2,000, the same noise)."""
    key = (a, b)
    if key not in _SLICES:
        parts = []
        s = (a // 2000) * 2000
        while s < b:
            block = c.vectors(s, s + 2000)
            lo, hi = max(a, s) - s, min(b, s + 2000) - s
            parts.append(block[lo:hi])
            s += 2000
        _SLICES[key] = np.concatenate(parts)
    return _SLICES[key]


def searches(
    app: Tideline, c: Corpus, turns: int, queries: int, label: str, warm: int = 0
) -> dict[str, Any]:
    """The searches of the module docstring; `warm`: that many other questions asked first, so
    the engine's caches (PostgreSQL's shared buffers) hold what a serving database holds."""
    memory = app.memory
    raw = memory.raw
    ids = raw.ids()
    qs = list(range(min(queries, len(c.queries))))
    text = [c.queries[i] for i in qs]
    vec = [c.query_vectors[i] for i in qs]
    policy = memory.turn_policy
    out: dict[str, Any] = {"label": label}
    memory.search_turns("what did we talk about?", 10)  # warm-up: the model, the files
    for i in range(len(qs), min(len(qs) + warm, len(c.queries))):
        memory.search_turns(c.queries[i], 10)
    out["warmed_with"] = warm
    e2e_cpu: list[float] = []
    sent = getattr(raw.db, "statements", None)  # PostgreSQL: the statements a search sends
    e2e = timed(lambda n: memory.search_turns(text[n], 10), len(qs), e2e_cpu)
    if sent is not None:
        out["turns_e2e_statements"] = (getattr(raw.db, "statements", 0) - sent) / len(qs)
    out["turns_e2e"] = ms_stats(e2e)
    out["turns_e2e_cpu"] = ms_stats(e2e_cpu)
    by_kind: dict[str, list[float]] = {}
    for n, s in zip(qs, e2e, strict=True):
        by_kind.setdefault(c.query_kinds[n], []).append(s)
    out["turns_e2e_by_kind"] = {k: ms_stats(v) for k, v in sorted(by_kind.items())}
    hybrid_cpu: list[float] = []
    sent = getattr(raw.db, "statements", None)
    out["turns_hybrid"] = ms_stats(
        timed(
            lambda n: retrieve(
                Scope(raw.index), text[n], vec[n], 10, "hybrid", policy, texts=raw.texts
            ).top(10),
            len(qs),
            hybrid_cpu,
        )
    )
    out["turns_hybrid_cpu"] = ms_stats(hybrid_cpu)
    if sent is not None:
        out["turns_hybrid_statements"] = (getattr(raw.db, "statements", 0) - sent) / len(qs)
    out["turns_lex"] = ms_stats(
        timed(lambda n: raw.index.lexical(text[n], policy.depth_for(10)), len(qs))
    )
    got: list[list[int]] = []
    out["turns_vec"] = ms_stats(
        timed(lambda n: got.append([h.id for h in raw.index.vector(vec[n], 10)]), len(qs))
    )
    recall = []
    for n, hits in enumerate(got[: min(100, len(got))]):
        truth = {ids[p] for p in exact_top(c, turns, vec[n]) if p < len(ids)}
        recall.append(len(truth & set(hits)) / 10)
    out["vec_recall"] = float(np.mean(recall))
    out["narr_hybrid"] = ms_stats(
        timed(
            lambda n: retrieve(
                Scope(memory.narratives.index),
                text[n],
                vec[n],
                10,
                "hybrid",
                memory.narrative_policy,
                texts=memory.narratives.texts,
            ).top(10),
            len(qs),
        )
    )
    out["windows"] = [window(raw, c, turns, share, text, vec, policy) for share in WINDOWS]
    return out


def profile(app: Tideline, c: Corpus, queries: int, dump: Path) -> dict[str, Any]:
    """Where the product path's CPU goes: `Memory._turn_retrieval` (the levers, retrieve,
    fusion, the score) with the cached query vector, under a CPU-time profiler (the wall clock
    on a shared machine is mostly waiting for a core). The stats go to `dump` (pstats); the
    functions with the most own and cumulative CPU are returned."""
    import cProfile
    import io
    import pstats

    memory = app.memory
    n = min(queries, len(c.queries))

    def one(i: int) -> None:
        memory._turn_retrieval(
            c.queries[i], c.query_vectors[i], 10, "hybrid", None, None, None, memory.min_score
        ).top(10)

    for i in range(5):  # warm-up: the files, the page cache, the statements
        one(i)
    cpu: list[float] = []
    wall = timed(one, n, cpu)
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    for i in range(n):
        one(i)
    prof.disable()
    prof.dump_stats(str(dump))
    top: dict[str, str] = {}
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats(order).print_stats(30)
        top[order] = text.getvalue()
        print(text.getvalue(), file=sys.stderr)
    return {"queries": n, "wall": ms_stats(wall), "cpu": ms_stats(cpu), "pstats": str(dump), **top}


def lexical_copy(lite: Tideline, url: str, say: Callable[[str], None]) -> PgTextIndex:
    """The turns' text index alone, copied into its own namespace as `migrate` copies it (texts
    and lexical keys from SQLite), analysed: the lexical side measured without the rest."""
    db = open_postgres(url, Namespace("lexical"), AGENT_MIGRATIONS)
    index = RawContext(db, clock=system_clock).index
    assert isinstance(index, PgTextIndex)
    if not db.scalar(f"SELECT 1 FROM {index.name}_text LIMIT 1"):
        raw = lite.memory.raw
        ids = raw.ids()
        began = time.perf_counter()
        for a in range(0, len(ids), 2000):
            part = ids[a : a + 2000]
            index.upsert_many(sorted(raw.texts(part).items()), raw.lexical_keys(part))
        db.execute("ANALYZE")
        say(f"lexical copy: {len(ids):,} turns in {time.perf_counter() - began:.0f} s")
    return index


def lexical_change(
    index: TextIndex, lite: TextIndex, text: list[str], n: int = 30
) -> dict[str, Any]:
    """PostgreSQL's lexical top-10 against ranking every match (`ts_rank` over all of them: the
    query before issue 25, got by calling no term frequent) and against SQLite's BM25 (its
    lexical file) on the same turns: the share of each top-10 in common, and the time."""
    from tideline.search import _pg_index

    rows: list[tuple[float, float, float]] = []
    bounded, every = [], []
    for q in text[:n]:
        began = time.perf_counter()
        new = {h.id for h in index.lexical(q, 10)}
        bounded.append(time.perf_counter() - began)
        share = _pg_index.FREQUENT_SHARE
        _pg_index.FREQUENT_SHARE = 2.0  # no term is frequent: every match ranked
        try:
            began = time.perf_counter()
            old = {h.id for h in index.lexical(q, 10)}
            every.append(time.perf_counter() - began)
        finally:
            _pg_index.FREQUENT_SHARE = share
        bm25 = {h.id for h in lite.lexical(q, 10)}
        rows.append((len(new & old) / 10, len(new & bm25) / 10, len(old & bm25) / 10))
    got = np.mean(np.array(rows), axis=0) if rows else np.zeros(3)
    return {
        "queries": len(rows),
        "bounded": ms_stats(bounded),
        "every_match": ms_stats(every),
        "same_as_every_match": float(got[0]),
        "bounded_vs_bm25": float(got[1]),
        "every_match_vs_bm25": float(got[2]),
    }


def window(
    raw: RawContext,
    c: Corpus,
    turns: int,
    share: float,
    text: list[str],
    vec: list[np.ndarray],
    policy: Any,
) -> dict[str, Any]:
    """Vector and hybrid search inside a time window of `share` of the turns."""
    ids = raw.ids()
    first = int(turns * 0.4)
    last = first + max(10, int(turns * share))
    where = raw.filter(said_at(first), said_at(last - 1))
    n = min(50, len(text))
    hits: list[list[int]] = []
    cv: list[float] = []
    ch: list[float] = []
    sv = timed(
        lambda i: hits.append(
            [h.id for h in retrieve(where, "x", vec[i], 10, "vec", policy).top(10)]
        ),
        n,
        cv,
    )
    sh = timed(
        lambda i: retrieve(where, text[i], vec[i], 10, "hybrid", policy, texts=raw.texts).top(10),
        n,
        ch,
    )
    rec = []
    for i, h in enumerate(hits):
        truth = {ids[p] for p in exact_top(c, turns, vec[i], first, last)}
        rec.append(len(truth & set(h)) / 10)
    return {
        "share": share,
        "rows": last - first,
        "vec": ms_stats(sv),
        "hybrid": ms_stats(sh),
        "vec_cpu": ms_stats(cv),
        "hybrid_cpu": ms_stats(ch),
        "returned": float(np.mean([len(h) for h in hits])),
        "recall": float(np.mean(rec)),
    }


# -- processes -----------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(home: Path, url: str = "", embedder: str = "e5") -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {
        **os.environ,
        "AGENT_NAME": AGENT,
        "TIDELINE_EMBEDDER": embedder,
        "TIDELINE_HOME": str(home),
    }
    if url:
        env["TIDELINE_DATABASE_URL"] = url
    log = (home / f"serve-{port}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tideline", "serve", "--transport", "http", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"tideline serve exited {proc.returncode}; see {log.name}")
        try:
            if httpx.get(f"{base}/api/stats", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)  # a bench polling a process it started (tests use wait_until)
    raise SystemExit(f"tideline serve on port {port} did not answer in 300 s; see {log.name}")


def _rss(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


def _resident_by_file(pid: int, top: int = 8) -> dict[str, float]:
    """MB resident per mapped file (and `[anon]`), the largest `top`: what the RSS is made of."""
    by: dict[str, float] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(None, 5)
        if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
            name = head[5] if len(head) > 5 and head[5].startswith("/") else "[anon]"
        elif line.startswith("Rss:"):
            by[name] = by.get(name, 0.0) + int(line.split()[1]) / 1024
    return dict(sorted(by.items(), key=lambda kv: -kv[1])[:top])


def server_rss(home: Path, c: Corpus, searches_n: int) -> dict[str, Any]:
    proc, base = serve(home)
    try:
        started = _rss(proc.pid)
        seconds = []
        by_searches = {}  # RSS every 50 searches: the mapped files' pages grow as searches touch them
        with httpx.Client(base_url=base, timeout=120) as http:
            for n in range(searches_n):
                if n and n % 50 == 0:
                    by_searches[n] = _rss(proc.pid)
                began = time.perf_counter()
                http.get(
                    "/api/search",
                    params={
                        "query": c.queries[n % len(c.queries)],
                        "k": 10,
                        "include_turns": "true",
                    },
                ).raise_for_status()
                seconds.append(time.perf_counter() - began)
        return {
            "rss_started": started,
            "rss_after": _rss(proc.pid),
            "resident_by_file": _resident_by_file(proc.pid),
            "rss_by_searches": by_searches,
            "searches": searches_n,
            "rest_search": ms_stats(seconds[1:]),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def cli_search(home: Path, c: Corpus, runs: int = 5, url: str = "") -> dict[str, Any]:
    """`tideline search` from process start to exit, and the CPU seconds it used (on a loaded
    machine the wall time is mostly waiting for a core). Bytecode is written as an installed
    package has it (one uncounted call first); each query is new to the embedding cache."""
    env = {**os.environ, "AGENT_NAME": AGENT, "TIDELINE_HOME": str(home)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if url:
        env["TIDELINE_DATABASE_URL"] = url
    seconds, cpu = [], []
    for n in range(runs + 1):
        query = f"{c.queries[n]} ({time.time_ns()})"  # never in the embedding cache
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "tideline", "search", query, "--turns", "--json"],
            env=env,
            check=True,
            capture_output=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if n:
            seconds.append(time.perf_counter() - began)
            cpu.append(after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime)
    return {
        "cli_search": ms_stats(seconds),
        "cli_cpu": ms_stats(cpu),
        "cli_runs": [round(s, 2) for s in seconds],
    }


def migrate(path: Path, url: str) -> dict[str, Any]:
    """`tideline migrate` of the database at `path`, its progress lines in migrate.log beside it
    (stamped, so the time of each step can be read while it runs)."""
    env = {**os.environ, "AGENT_NAME": AGENT}
    log = path.with_name("migrate.log")
    began = time.perf_counter()
    with log.open("w") as err:
        done = subprocess.Popen(
            [*TIDELINE, "migrate", "--to", url, "--from", str(path), "--json"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert done.stderr is not None and done.stdout is not None
        for line in done.stderr:
            err.write(f"{time.strftime('%H:%M:%S')} {line}")
            err.flush()
        out = done.stdout.read()
        done.wait()
    seconds = time.perf_counter() - began
    stderr = log.read_text()
    report = json.loads(out) if out.strip().startswith("{") else {}
    ok = done.returncode == 0 and all(t.get("ok") for t in report.get("tables", []))
    return {
        "migrate_s": seconds,
        "migrate_rc": done.returncode,
        "migrate_ok": ok and all(i.get("ok") for i in report.get("indexes", [])),
        "migrate_err": stderr[-500:] if done.returncode else "",
    }


def client(base: str, seconds: float, me: int) -> None:
    """One client of one server (see the module docstring); prints its tally as JSON."""
    acked: list[int] = []
    stream_ticks = 0
    errors: list[str] = []
    writes: list[float] = []
    searches_s: list[float] = []
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
                    searches_s.append(time.perf_counter() - began)
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
                "search_ms": ms_stats(searches_s) if searches_s else ("-", "-"),
            }
        )
    )


def concurrency(url: str, processes: int, seconds: float, home: Path) -> dict[str, Any]:
    servers = [serve(home, url, embedder="none") for _ in range(processes)]
    try:
        clients = [
            subprocess.Popen(
                [sys.executable, __file__, "--client", base, str(seconds), str(w)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for w, (_, base) in enumerate(servers)
        ]
        tallies = [json.loads(p.communicate(timeout=seconds + 600)[0]) for p in clients]
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait(timeout=60)
    db = open_postgres(url, Namespace(AGENT), AGENT_MIGRATIONS)
    try:
        raw = RawContext(db, clock=system_clock)
        acked = [i for t in tallies for i in t["acked"]]
        present = {t.id for t in raw.get(acked)}
        sid = raw.session_id("stream")
        stream = raw.session_turns(sid) if sid is not None else []
    finally:
        db.close()
    write_p95 = max(float(t["write_ms"][1]) for t in tallies if t["write_ms"][1] != "-")
    search_p95 = max(float(t["search_ms"][1]) for t in tallies if t["search_ms"][1] != "-")
    return {
        "processes": processes,
        "seconds": seconds,
        "writes": len(acked),
        "lost": len(acked) - len(present),
        "stream_rows": len(stream),
        "stream_ticks": max(t["ticks"] for t in tallies),
        "stream_duplicates": len(stream) - len({t.text for t in stream}),
        "errors": sum(t["error_count"] for t in tallies),
        "error_lines": [e for t in tallies for e in t["errors"]][:3],
        "write_p95_worst": write_p95,
        "search_p95_worst": search_p95,
        "write_ms": [t["write_ms"] for t in tallies],
        "search_ms": [t["search_ms"] for t in tallies],
    }


# -- the run -------------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=100_000)
    ap.add_argument("--narratives", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--vectors", choices=("real", "random"), default="real")
    ap.add_argument(
        "--texts",
        type=Path,
        default=CACHE,
        help="texts and vectors (bench/_scale_texts.py; --from-caches writes scale-texts-real.npz)",
    )
    ap.add_argument("--engines", default="sqlite,postgresql")
    ap.add_argument("--processes", type=int, default=16)
    ap.add_argument(
        "--server-searches", type=int, default=50, help="REST searches of the server RSS phase"
    )
    ap.add_argument(
        "--warm", type=int, default=0, help="PostgreSQL: other questions asked before timing"
    )
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--results", type=Path, default=Path("/work/cache/runs/pg-scale.jsonl"))
    ap.add_argument("--keep", type=Path, help="work folder to keep (and reuse) the databases in")
    ap.add_argument(
        "--write", action="store_true", help="write docs/benchmarks-history.md (pg-scale)"
    )
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument(
        "--sqlite-phases", default="search,cli,server", help="SQLite phases to run (also: profile)"
    )
    ap.add_argument(
        "--pg-phases",
        default="migrate,search,cli,concurrency",
        help="PostgreSQL phases to run (with --keep, a database migrated before is reused)",
    )
    ap.add_argument("--client", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        base, seconds, me = args.client
        client(base, float(seconds), int(me))
        return
    if args.report_only:
        rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
        body = report(rows)
        print(body)
        if args.write:
            write_section("pg-scale", body)
        return

    def say(line: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

    args.results.parent.mkdir(parents=True, exist_ok=True)
    c = Corpus(args.vectors, path=args.texts)
    engines = args.engines.split(",")
    phases = set(args.pg_phases.split(","))
    lite_phases = set(args.sqlite_phases.split(","))
    work = args.keep or Path(tempfile.mkdtemp(prefix="tideline-scale-"))
    home = work / "home"
    home.mkdir(parents=True, exist_ok=True)
    path = home / "memory.db"
    meta = {
        "turns": args.turns,
        "narratives": args.narratives,
        "vectors": args.vectors,
        "texts": len(c.texts),
        "queries": min(args.queries, len(c.queries)),
        "machine": machine(),
        "command": " ".join(["bench/pg_scale.py", *sys.argv[1:]]),
    }
    record(args.results, "start", **meta)
    server = None
    try:
        if not path.exists():
            record(
                args.results,
                "sqlite-load",
                **load_sqlite(path, c, args.turns, args.narratives, say),
            )
            record(args.results, "sqlite-files", **build_files(path, say))
        if "sqlite" in engines:
            if "search" in lite_phases:
                app = app_for(home, fresh_cache=True)
                try:
                    record(
                        args.results,
                        "sqlite-search",
                        **searches(app, c, args.turns, args.queries, "SQLite"),
                    )
                finally:
                    app.close()
            if "profile" in lite_phases:
                app = app_for(home)
                try:
                    dump = args.results.with_name("sqlite-profile.pstats")
                    record(args.results, "sqlite-profile", **profile(app, c, args.queries, dump))
                finally:
                    app.close()
            if "cli" in lite_phases:
                record(args.results, "sqlite-cli", **cli_search(home, c))
            if "server" in lite_phases:
                record(args.results, "sqlite-server", **server_rss(home, c, args.server_searches))
        if "postgresql" in engines:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # pgserver: no XDG_RUNTIME_DIR here
                import pgserver

                # a kept work folder keeps the migrated database too (`--pg-phases` reuses it)
                server = pgserver.get_server(work / "pg", "stop" if args.keep else "delete")
            url = server.get_uri()
            migrated = work / "pg-migrated"
            if "lexical" in phases:  # the text index alone, in a namespace of its own
                lite = app_for(home)
                try:
                    copied = lexical_copy(lite, url, say)
                    text = list(c.queries[: args.queries])
                    change = lexical_change(copied, lite.memory.raw.index, text, len(text))
                    record(args.results, "pg-lexical", **change)
                finally:
                    lite.close()
            agent = bool(phases & {"migrate", "search", "cli", "concurrency"})
            if agent and ("migrate" in phases or not migrated.exists()):
                memory = f"{max(1, math.ceil(args.turns / 250_000))}GB"
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(f"ALTER SYSTEM SET maintenance_work_mem = '{memory}'")
                    conn.execute("SELECT pg_reload_conf()")
                record(
                    args.results, "pg-migrate", maintenance_work_mem=memory, **migrate(path, url)
                )
                pg = open_postgres(url, Namespace(AGENT), AGENT_MIGRATIONS)
                pg.execute("ANALYZE")
                for index in (
                    RawContext(pg, clock=system_clock).index,
                    Narratives(pg, clock=system_clock).index,
                ):
                    assert isinstance(index, PgTextIndex)
                pg.close()
                migrated.touch()
            if "search" in phases:
                app = app_for(home, url, fresh_cache=True)
                try:
                    record(
                        args.results,
                        "pg-search",
                        **searches(
                            app, c, args.turns, args.queries, "PostgreSQL (HNSW)", args.warm
                        ),
                    )
                    if "profile" in phases:
                        dump = args.results.with_name("pg-profile.pstats")
                        record(args.results, "pg-profile", **profile(app, c, args.queries, dump))
                    lite = app_for(home)
                    try:
                        text = list(c.queries[: args.queries])
                        change = lexical_change(app.memory.raw.index, lite.memory.raw.index, text)
                        record(args.results, "pg-lexical", **change)
                    finally:
                        lite.close()
                finally:
                    app.close()
            if "cli" in phases:
                record(args.results, "pg-cli", **cli_search(home, c, url=url))
            if "concurrency" in phases:
                record(
                    args.results,
                    "pg-concurrency",
                    **concurrency(url, args.processes, args.seconds, home),
                )
    finally:
        if server is not None:
            server.cleanup()
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    record(args.results, "end")
    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    body = report(rows)
    print(body)
    if args.write:
        write_section("pg-scale", body)


def report(rows: list[dict[str, Any]]) -> str:
    """The tables, from the last run's phases (the rows after its last `start`)."""
    starts = [r for r in rows if r["phase"] == "start"]
    meta = starts[-1] if starts else {}
    same = (meta.get("turns"), meta.get("vectors"))
    run: list[dict[str, Any]] = []
    current = False
    for r in rows:  # runs of this scale (one engine at a time may be run on kept databases)
        if r["phase"] == "start":
            current = (r.get("turns"), r.get("vectors")) == same
        elif current:
            run.append(r)
    got = {r["phase"]: r for r in run}
    loads = [f"{r['load']:.1f}" for r in run]
    lines = [
        "## The agent database at scale, SQLite and PostgreSQL (bench/pg_scale.py)",
        "",
        f"{meta.get('turns', 0):,} turns (sessions of {SESSION_TURNS}), {meta.get('narratives', 0):,}"
        f" narratives; texts and vectors: {meta.get('vectors')} — the e5 vectors of"
        f" {meta.get('texts', 0):,} distinct LoCoMo turns, tldr lines and tldr library chunks"
        " replicated with noise"
        " (norm 0.15–0.45)"
        + (" replaced by uniform random unit vectors" if meta.get("vectors") == "random" else "")
        + f"; {meta.get('queries')} LoCoMo questions (four kinds) as queries, k=10."
        f" Machine: {meta.get('machine')}; load average per phase {', '.join(loads)}"
        f" (shared with other engineers' runs). Command: `{meta.get('command')}`.",
        "",
    ]
    load = got.get("sqlite-load")
    files = got.get("sqlite-files")
    if load:
        t, n = meta["turns"], meta["narratives"]
        lines += [
            "| load (SQLite, through the owners) | |",
            "|---|---:|",
            f"| turns/s (`add_turns`) | {t / load['turns_s']:,.0f} |",
            f"| turn vectors/s (`set_vectors`) | {t / load['vectors_s']:,.0f} |",
            f"| narratives/s (insert + vector) | {n / load['narratives_s']:,.0f} |",
        ]
    if files:
        lines += [
            f"| vector file build, turns / narratives s | {files['turns_vector_file_s']:.0f} / {files['narratives_vector_file_s']:.0f} |",
            f"| lexical file build, turns / narratives s | {files['turns_lexical_file_s']:.0f} / {files['narratives_lexical_file_s']:.0f} |",
            f"| memory.db / vector files / lexical files MB | {files['db_mb']:,.0f} / "
            + " / ".join(f"{v:,.0f}" for v in files["file_mb"].values())
            + " |",
        ]
    mig = got.get("pg-migrate")
    if mig:
        lines.append(
            f"| `tideline migrate` SQLite → PostgreSQL, copy + HNSW build s | {mig['migrate_s']:,.0f}"
            f" ({'checked equal' if mig['migrate_ok'] else 'NOT equal: ' + mig['migrate_err']}) |"
        )
    lines += [
        "",
        "| search (ms, p50 / p95) | turns, product path with e5 | turns hybrid, vector given | lexical | vector | vector recall@10 vs exact | narratives hybrid |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for phase in ("sqlite-search", "pg-search"):
        r = got.get(phase)
        if r:
            lines.append(
                f"| {r['label']} | {' / '.join(r['turns_e2e'])} | {' / '.join(r['turns_hybrid'])}"
                f" | {' / '.join(r['turns_lex'])} | {' / '.join(r['turns_vec'])} | {r['vec_recall']:.3f}"
                f" | {' / '.join(r['narr_hybrid'])} |"
            )
    cpu_rows = [
        f"| {r['label']} | {' / '.join(r['turns_e2e_cpu'])} | {' / '.join(r['turns_hybrid_cpu'])} |"
        for r in (got.get(p) for p in ("sqlite-search", "pg-search"))
        if r and "turns_e2e_cpu" in r
    ]
    if cpu_rows:
        lines += [
            "",
            "CPU time of the searching process for the same searches (all its threads; on"
            " PostgreSQL the server's own processes are not counted):",
            "",
            "| CPU ms, p50 / p95 | turns, product path with e5 | turns hybrid, vector given |",
            "|---|---:|---:|",
            *cpu_rows,
        ]
    lines += [
        "",
        "| turns, product path, by question kind (p50 / p95 ms) | "
        + " | ".join(
            k
            for k in sorted(
                (got.get("sqlite-search") or got.get("pg-search") or {}).get(
                    "turns_e2e_by_kind", {}
                )
            )
        )
        + " |",
    ]
    kinds = sorted(
        (got.get("sqlite-search") or got.get("pg-search") or {}).get("turns_e2e_by_kind", {})
    )
    lines.append("|---|" + "---:|" * len(kinds))
    for phase in ("sqlite-search", "pg-search"):
        r = got.get(phase)
        if r:
            lines.append(
                f"| {r['label']} | "
                + " | ".join(" / ".join(r["turns_e2e_by_kind"][k]) for k in kinds)
                + " |"
            )
    lines += [
        "",
        "| inside a time window | window | vector p50 / p95 ms | hybrid p50 / p95 ms | CPU ms, vector / hybrid p50 | returned (of 10) | recall@10 vs exact |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for phase in ("sqlite-search", "pg-search"):
        r = got.get(phase)
        for w in (r or {}).get("windows", []):
            cpu = f"{w['vec_cpu'][0]} / {w['hybrid_cpu'][0]}" if "vec_cpu" in w else "—"
            lines.append(
                f"| {r['label']} | {w['share']:.1%} ({w['rows']:,} turns) | {' / '.join(w['vec'])}"
                f" | {' / '.join(w['hybrid'])} | {cpu} | {w['returned']:.1f} | {w['recall']:.2f} |"
            )
    lx = got.get("pg-lexical")
    if lx:
        lines += [
            "",
            f"PostgreSQL lexical top-10 ({lx['queries']} queries): the bounded candidates (issue 25)"
            " against ranking every match with `ts_rank`, and each against SQLite's BM25 top-10"
            " (its lexical file) on the same turns:",
            "",
            "| lexical on PostgreSQL | p50 / p95 ms | top-10 in common with every-match ranking"
            " | with SQLite's BM25 |",
            "|---|---:|---:|---:|",
            f"| bounded candidates (rare terms first) | {' / '.join(lx['bounded'])}"
            f" | {lx['same_as_every_match']:.2f} | {lx['bounded_vs_bm25']:.2f} |",
            f"| every match ranked (before) | {' / '.join(lx['every_match'])} | 1.00"
            f" | {lx['every_match_vs_bm25']:.2f} |",
        ]
    lines += ["", "| processes | |", "|---|---|"]
    for phase, label in (("sqlite-cli", "SQLite"), ("pg-cli", "PostgreSQL")):
        r = got.get(phase)
        if r:
            lines.append(
                f"| `tideline search … --turns --json` from process start to exit, {label} (p50 / p95 ms of {len(r['cli_runs'])}) | {' / '.join(r['cli_search'])} |"
            )
            if "cli_cpu" in r:
                lines.append(
                    f"| of it CPU time of the process (user + system), {label} (p50 / p95 ms) | {' / '.join(r['cli_cpu'])} |"
                )
    s = got.get("sqlite-server")
    if s:
        lines.append(
            f"| `tideline serve` (SQLite, e5) RSS after {s.get('searches', 50)} REST searches:"
            " VmRSS / of it mapped files / peak MB"
            f" | {s['rss_after']['VmRSS']:,.0f} / {s['rss_after'].get('RssFile', 0):,.0f} / {s['rss_after'].get('VmHWM', 0):,.0f}"
            f" (REST search p50 / p95 {' / '.join(s['rest_search'])} ms) |"
        )
    cc = got.get("pg-concurrency")
    if cc:
        lines += [
            "",
            f"**{cc['processes']} `tideline serve` processes on one PostgreSQL, {cc['seconds']:g} s**,"
            f" each driven by its own REST client (its own turns, a stream all of them write, a search"
            f" with turns every fifth step): {cc['writes']:,} writes acknowledged"
            f" ({cc['writes'] / cc['seconds']:,.0f}/s, plus as many stream writes),"
            f" **{cc['lost']} lost**; the stream has {cc['stream_rows']:,} rows for"
            f" {cc['stream_ticks']:,} ticks (**{cc['stream_duplicates']} duplicated**);"
            f" **{cc['errors']} errors**. Worst client's p95: write (both requests)"
            f" {cc['write_p95_worst']:.0f} ms, search {cc['search_p95_worst']:.0f} ms.",
        ]
        if cc["error_lines"]:
            lines.append(f"First errors: {cc['error_lines']}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
