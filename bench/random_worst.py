"""The worst case for a vector graph: uniform random unit vectors (issue 25), on both engines.

Real embeddings cluster; random vectors in 384 dimensions do not, so every point's neighbours
are nearly as far as any other point and an HNSW walk finds few of the true nearest. This
measures what the product's own indexes recall then: `TextIndex` with its vector file (usearch,
the product's M / build walk, int8, candidates re-scored exactly, the query walk the settings
choose) and `PgTextIndex` (pgvector HNSW built once after the copy, as `tideline migrate` does,
the walk `hnsw.ef_search` the same settings choose), each against numpy's exact top 10 over the
same vectors, at the product's walk and at wider ones (`vector_ef_search`). No text and no
embedding: only the vectors go in.

    .venv/bin/python bench/random_worst.py --n 200000 --keep /work/cache/random-200k
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from _report import machine, ms_stats

from tideline.search import TextIndex, VectorOptions, create_index, open_index
from tideline.store import Database, Namespace, Storage, open_postgres

DIM = 384
K = 10
BATCH = 5000
#: The product's vector file starts at `vector_index_min`'s default.
FILE_MIN = 50_000
WALKS = (0, 640, 1000)  # 0: the product's choice (settings default)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def vectors(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    for a in range(0, n, 65536):
        b = min(n, a + 65536)
        out[a:b] = unit(rng.standard_normal((b - a, DIM)))
    return out


def record(path: Path, phase: str, **data: Any) -> None:
    row = {"phase": phase, "at": time.strftime("%H:%M:%S"), **data}
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row), flush=True)


def fill(index: TextIndex, matrix: np.ndarray) -> float:
    """Every vector as record 1..n, in batches of one transaction each; seconds taken."""
    began = time.perf_counter()
    index.bind_vectors("random-unit", DIM)
    for a in range(0, len(matrix), BATCH):
        part = matrix[a : a + BATCH]
        with index.db.transaction():
            index.set_vectors(zip(range(a + 1, a + 1 + len(part)), part, strict=True))
    return time.perf_counter() - began


def measure(index: TextIndex, queries: np.ndarray, truth: list[set[int]]) -> list[dict[str, Any]]:
    """Recall@10 and latency at each walk of `WALKS`."""
    out = []
    for ef in WALKS:
        index.configure(VectorOptions(file_min=FILE_MIN, ef_search=ef))
        index.vector(queries[0], K)  # the file opened, the statements prepared
        got, took = [], []
        for q in queries:
            began = time.perf_counter()
            got.append({h.id for h in index.vector(q, K)})
            took.append(time.perf_counter() - began)
        recall = [len(g & t) / K for g, t in zip(got, truth, strict=True)]
        out.append(
            {
                "walk": ef or "product",
                "recall": float(np.mean(recall)),
                "recall_p5": float(np.percentile(recall, 5)),
                "ms": ms_stats(took),
            }
        )
    return out


def exact(matrix: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    sims = queries @ matrix.T
    top = np.argpartition(-sims, K, axis=1)[:, :K]
    return [{int(j) + 1 for j in row} for row in top]


def sqlite_run(work: Path, matrix: np.ndarray, queries: np.ndarray, truth: list[set[int]]) -> dict:
    path = work / "random.db"
    for old in (path, work / "random.db.vectors"):
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)
    db = Database(path)
    create_index(db, "rnd")
    index = open_index(db, "rnd")
    index.configure(VectorOptions(file_min=FILE_MIN))
    fill_s = fill(index, matrix)
    began = time.perf_counter()
    assert index.vector_file().build(threads=2)
    build_s = time.perf_counter() - began
    rows = measure(index, queries, truth)
    file = index.vector_file()
    stats = file.stats() if file is not None else {}
    db.close()
    return {"fill_s": fill_s, "build_s": build_s, "file": stats, "walks": rows}


def pg_run(work: Path, matrix: np.ndarray, queries: np.ndarray, truth: list[set[int]]) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pgserver: no XDG_RUNTIME_DIR here
        import pgserver

        server = pgserver.get_server(work / "pg", "delete")
    try:
        url = server.get_uri()
        memory = f"{max(1, math.ceil(len(matrix) / 250_000))}GB"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"ALTER SYSTEM SET maintenance_work_mem = '{memory}'")
            conn.execute("SELECT pg_reload_conf()")
        db: Storage = open_postgres(url, Namespace("random_worst"))
        create_index(db, "rnd")
        index = open_index(db, "rnd")
        index.bind_vectors("random-unit", DIM)
        index.set_ann(False)  # one build after the copy, as `tideline migrate` does
        fill_s = fill(index, matrix)
        began = time.perf_counter()
        index.set_ann(True)
        build_s = time.perf_counter() - began
        db.execute("ANALYZE")
        rows = measure(index, queries, truth)
        db.close()
        return {"fill_s": fill_s, "build_s": build_s, "walks": rows}
    finally:
        server.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--engines", default="sqlite,postgresql")
    ap.add_argument("--keep", type=Path, help="work folder (default: a temporary one, removed)")
    ap.add_argument("--results", type=Path, default=Path("/work/cache/runs/random-worst.jsonl"))
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="tideline-random-"))
    work.mkdir(parents=True, exist_ok=True)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    matrix = vectors(args.n, 25)
    queries = vectors(args.queries, 26)
    truth = exact(matrix, queries)
    record(args.results, "start", n=args.n, queries=args.queries, machine=machine())
    try:
        for engine in args.engines.split(","):
            run = sqlite_run if engine == "sqlite" else pg_run
            record(args.results, engine, n=args.n, **run(work, matrix, queries, truth))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
