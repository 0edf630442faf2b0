"""Micro benchmark of the search core: lexical, vector and hybrid latency at 10k and 100k records.

Synthetic records: sentences drawn from a Zipf-distributed vocabulary, 384-dim unit vectors with
planted cluster structure (so KNN is not degenerate). Query vectors come from the real bundled e5
model, timed on their own, and the hybrid latency is reported with and without it.

    .venv/bin/python bench/search_micro.py            # writes docs/benchmarks-history.md (search-micro)
    .venv/bin/python bench/search_micro.py --sizes 10000 --queries 50
    .venv/bin/python bench/search_micro.py --no-embedder --no-write   # search alone, no e5

`--no-embedder` gives each query a random unit vector (its own seed, so the records are the same)
and leaves out the rows that time the embedding: the search core on its own, which can run while
another process holds the embedding lock.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from _report import machine, ms_stats, write_section

from tideline.embed import E5Embedder
from tideline.search import TextIndex, pending_vector
from tideline.store import open_database

WORDS = [
    "memory",
    "agent",
    "session",
    "archive",
    "restore",
    "backup",
    "cactus",
    "garden",
    "tokyo",
    "train",
    "river",
    "tide",
    "shore",
    "moon",
    "whale",
    "listen",
    "project",
    "budget",
    "meeting",
    "python",
    "package",
    "network",
    "server",
    "database",
    "index",
    "search",
    "vector",
    "lexical",
    "hybrid",
    "cluster",
    "topic",
    "weight",
    "dream",
    "sleep",
    "profile",
    "fact",
    "evidence",
    "user",
    "friend",
    "family",
    "travel",
    "music",
    "painting",
    "running",
    "coffee",
    "morning",
    "evening",
    "winter",
    "summer",
    "report",
]


def synth_texts(n: int, rng: np.random.Generator) -> list[str]:
    vocab = WORDS + [f"term{i}" for i in range(5000)]
    ranks = np.arange(1, len(vocab) + 1)
    p = 1 / ranks
    p /= p.sum()
    lengths = rng.integers(8, 40, size=n)
    picks = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    out, pos = [], 0
    for length in lengths:
        out.append(" ".join(vocab[i] for i in picks[pos : pos + length]))
        pos += length
    return out


def synth_vectors(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    centres = rng.standard_normal((64, dim)).astype(np.float32)
    vecs = centres[rng.integers(0, 64, n)] + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def build(path: Path, n: int, rng: np.random.Generator) -> tuple[TextIndex, float]:
    db = open_database(path)
    idx = TextIndex(db, "records")
    idx.bind_vectors("synthetic", 384)
    started = time.perf_counter()
    texts = synth_texts(n, rng)
    vecs = synth_vectors(n, 384, rng)
    for s in range(0, n, 5000):
        idx.upsert_many([(i + 1, texts[i]) for i in range(s, min(n, s + 5000))])
        idx.set_vectors((i + 1, vecs[i]) for i in range(s, min(n, s + 5000)))
    return idx, time.perf_counter() - started


def run(sizes: list[int], n_queries: int, embedder: bool = True) -> str:
    rng = np.random.default_rng(7)
    e5 = E5Embedder() if embedder else None
    head = [" ".join(rng.choice(WORDS, size=rng.integers(2, 6))) for _ in range(n_queries // 2)]
    mixed = [
        " ".join(
            [
                str(rng.choice(WORDS)),
                *(f"term{int(i)}" for i in rng.integers(0, 3000, size=rng.integers(1, 4))),
            ]
        )
        for _ in range(n_queries - len(head))
    ]
    queries = head + mixed
    embed_t, qvecs = [], []
    if e5 is None:
        qvecs = list(synth_vectors(len(queries), 384, np.random.default_rng(11)))
        embed_t = [0.0] * len(queries)
    else:
        e5.embed_query("warm up")
        for q in queries:
            t = time.perf_counter()
            qvecs.append(e5.embed_query(q))
            embed_t.append(time.perf_counter() - t)
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            idx, build_s = build(Path(tmp) / "bench.db", n, rng)
            for q, v in zip(queries[:5], qvecs[:5], strict=True):  # warm caches
                idx.search(q, v, 10)
            for label, sl in (
                ("head words", slice(0, len(head))),
                ("mixed", slice(len(head), None)),
            ):
                timings: dict[str, list[float]] = {
                    "lex": [],
                    "vec": [],
                    "hybrid": [],
                    "hybrid+embed": [],
                    "hybrid+embed overlapped": [],
                }
                for q, v, e in zip(queries[sl], qvecs[sl], embed_t[sl], strict=True):
                    for mode in ("lex", "vec", "hybrid"):
                        t = time.perf_counter()
                        idx.search(q, v, 10, mode=mode)  # type: ignore[arg-type]
                        timings[mode].append(time.perf_counter() - t)
                    if e5 is None:
                        continue
                    timings["hybrid+embed"].append(timings["hybrid"][-1] + e)
                    # What a caller waits for: the query embedded (again, uncached) on the query
                    # thread while the lexical list is searched.
                    t = time.perf_counter()
                    idx.search(q, pending_vector(e5, q), 10)
                    timings["hybrid+embed overlapped"].append(time.perf_counter() - t)
                for mode, values in timings.items():
                    if not values:
                        continue
                    p50, p95 = ms_stats(values)
                    rows.append(f"| {n:,} | {label} | {mode} | {p50} | {p95} | {build_s:.1f} |")
            idx.db.close()
    e50, e95 = ms_stats(embed_t) if e5 else ("—", "—")
    return "\n".join(
        [
            "## Search core (bench/search_micro.py)",
            "",
            f"Machine: {machine()}.",
            f"Synthetic records (Zipf vocabulary of 5,060 words, 8–40 words each; 384-dim vectors), "
            f"{n_queries} queries, k=10. *head words*: 2–5 of the 60 most frequent words (the "
            "worst case for BM25: every term matches 5–20% of records); *mixed*: one frequent word "
            "plus 1–3 mid-frequency terms. Latencies in ms; `hybrid+embed` adds each query's own e5 "
            "embedding time to the hybrid search (one after the other); `hybrid+embed overlapped` "
            "is the measured wall time of the search given the query still being embedded "
            "(`pending_vector`: the lexical list is searched meanwhile), what a caller waits for. "
            "Vector KNN runs on the in-process numpy copy (see search/_index.py).",
            "",
            f"Query embedding alone (bundled e5): p50 {e50} ms, p95 {e95} ms."
            if e5
            else "Query vectors: random unit vectors (`--no-embedder`), no embedding timed.",
            "",
            "| records | queries | mode | p50 ms | p95 ms | build s |",
            "|---:|---|---|---:|---:|---:|",
            *rows,
            "",
            "Target (issue 12): hybrid p95 at 100k records, head words, at most 40 ms including the "
            "query embedding.",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--no-embedder", action="store_true", help="random query vectors, no e5")
    args = ap.parse_args()
    body = run(args.sizes, args.queries, embedder=not args.no_embedder)
    print(body)
    if not args.no_write:
        write_section("search-micro", body)


if __name__ == "__main__":
    main()
