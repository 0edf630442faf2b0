"""Which approximate vector index for memory.db (issue 25): libraries measured side by side.

Every candidate indexes the same vectors and answers the same queries; each query's candidates
(`OVERFETCH` × k) are re-scored exactly from the float32 vectors, as Tideline's sidecar does, and
recall@10 is against numpy's exact top 10. Two sets: *real* — the cached e5 vectors of 32k
distinct LoCoMo turns and tldr lines (`bench/_scale_texts.py`) replicated with small noise to
`--n`, queried by LoCoMo's questions; *random* — uniform unit vectors queried by random unit
vectors (the worst case for a graph). Build time in this process; the queries run in a fresh
process that opens the saved index, so its RSS (VmRSS, and how much of it is the file mapping)
is what a searching process pays.

    flock /work/embed.lock .venv/bin/python bench/ann_choice.py --n 200000 --write
Needs `pip install usearch hnswlib faiss-cpu` (not Tideline dependencies: only the winner is).
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _report import machine, ms_stats, write_section

CACHE = Path(os.environ.get("TIDELINE_BENCH_CACHE", "/work/cache")) / "scale-texts.npz"
K = 10
OVERFETCH = 4
DIM = 384


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def real_set(n: int, queries: int, seed: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """`n` vectors: the cached e5 vectors, each replica moved by noise of norm 0.15–0.45."""
    data = np.load(CACHE)
    base, qs = data["vectors"], data["query_vectors"]
    rng = np.random.default_rng(seed)
    out = np.empty((n, base.shape[1]), dtype=np.float32)
    for start in range(0, n, 65536):
        idx = np.arange(start, min(n, start + 65536)) % len(base)
        noise = unit(rng.standard_normal((len(idx), base.shape[1])))
        scale = rng.uniform(0.15, 0.45, size=(len(idx), 1)).astype(np.float32)
        out[start : start + len(idx)] = unit(base[idx] + scale * noise)
    pick = rng.choice(len(qs), size=min(queries, len(qs)), replace=False)
    return out, qs[pick]


def random_set(n: int, queries: int, seed: int = 26) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 65536):
        out[start : start + 65536] = unit(rng.standard_normal((min(65536, n - start), DIM)))
    return out, unit(rng.standard_normal((queries, DIM)))


def exact(x: np.ndarray, qs: np.ndarray, k: int = K) -> np.ndarray:
    out = np.empty((len(qs), k), dtype=np.int64)
    for i, q in enumerate(qs):
        s = x @ q
        top = np.argpartition(-s, k)[:k]
        out[i] = top[np.argsort(-s[top])]
    return out


# -- the candidates: build(x, folder) saves; open(folder) returns search(q, n) -> row ids -----
def _usearch_build(dtype: str) -> Callable[[np.ndarray, Path], None]:
    def build(x: np.ndarray, folder: Path) -> None:
        from usearch.index import Index

        index = Index(
            ndim=x.shape[1], metric="cos", dtype=dtype, connectivity=16, expansion_add=128
        )
        index.add(np.arange(len(x)), x, threads=2)
        index.save(str(folder / "index.usearch"))

    return build


def _usearch_open(ef: int) -> Callable[[Path], Callable[[np.ndarray, int], np.ndarray]]:
    def open_(folder: Path) -> Callable[[np.ndarray, int], np.ndarray]:
        from usearch.index import Index

        index = Index.restore(str(folder / "index.usearch"), view=True)
        index.expansion_search = ef
        return lambda q, n: np.asarray(index.search(q, n, threads=1).keys, dtype=np.int64)

    return open_


def _hnswlib_build(x: np.ndarray, folder: Path) -> None:
    import hnswlib

    index = hnswlib.Index(space="cosine", dim=x.shape[1])
    index.init_index(max_elements=len(x), M=16, ef_construction=128)
    index.set_num_threads(2)
    index.add_items(x, np.arange(len(x)))
    index.save_index(str(folder / "index.hnswlib"))


def _hnswlib_open(ef: int) -> Callable[[Path], Callable[[np.ndarray, int], np.ndarray]]:
    def open_(folder: Path) -> Callable[[np.ndarray, int], np.ndarray]:
        import hnswlib

        index = hnswlib.Index(space="cosine", dim=DIM)
        index.load_index(str(folder / "index.hnswlib"))
        index.set_ef(ef)
        index.set_num_threads(1)
        return lambda q, n: index.knn_query(q, k=n)[0][0].astype(np.int64)

    return open_


def _faiss_ivf_build(x: np.ndarray, folder: Path) -> None:
    import faiss

    nlist = int(4 * np.sqrt(len(x)))
    quant = faiss.IndexFlatIP(x.shape[1])
    index = faiss.IndexIVFScalarQuantizer(
        quant, x.shape[1], nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    rng = np.random.default_rng(0)
    index.train(x[rng.choice(len(x), size=min(len(x), 64 * nlist), replace=False)])
    index.add(x)
    faiss.write_index(index, str(folder / "index.faiss"))


def _faiss_ivf_open(nprobe: int) -> Callable[[Path], Callable[[np.ndarray, int], np.ndarray]]:
    def open_(folder: Path) -> Callable[[np.ndarray, int], np.ndarray]:
        import faiss

        faiss.omp_set_num_threads(1)
        index = faiss.read_index(str(folder / "index.faiss"), faiss.IO_FLAG_MMAP)
        index.nprobe = nprobe
        return lambda q, n: index.search(q[None, :], n)[1][0].astype(np.int64)

    return open_


def _faiss_hnsw_build(x: np.ndarray, folder: Path) -> None:
    import faiss

    faiss.omp_set_num_threads(2)
    index = faiss.IndexHNSWSQ(
        x.shape[1], faiss.ScalarQuantizer.QT_8bit, 16, faiss.METRIC_INNER_PRODUCT
    )
    index.hnsw.efConstruction = 128
    index.train(x[: min(len(x), 100_000)])
    index.add(x)
    faiss.write_index(index, str(folder / "index.faiss"))


def _faiss_hnsw_open(ef: int) -> Callable[[Path], Callable[[np.ndarray, int], np.ndarray]]:
    def open_(folder: Path) -> Callable[[np.ndarray, int], np.ndarray]:
        import faiss

        faiss.omp_set_num_threads(1)
        index = faiss.read_index(str(folder / "index.faiss"), faiss.IO_FLAG_MMAP)
        index.hnsw.efSearch = ef
        return lambda q, n: index.search(q[None, :], n)[1][0].astype(np.int64)

    return open_


def _vec_bit_build(x: np.ndarray, folder: Path) -> None:
    import apsw
    import sqlite_vec

    conn = apsw.Connection(str(folder / "bits.db"))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding bit[{x.shape[1]}])")
    with conn:
        conn.executemany(
            "INSERT INTO v(rowid, embedding) VALUES (?, vec_quantize_binary(?))",
            ((i, x[i].tobytes()) for i in range(len(x))),
        )
    conn.close()


def _vec_bit_open(folder: Path) -> Callable[[np.ndarray, int], np.ndarray]:
    import apsw
    import sqlite_vec

    conn = apsw.Connection(str(folder / "bits.db"), flags=apsw.SQLITE_OPEN_READONLY)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())

    def search(q: np.ndarray, n: int) -> np.ndarray:
        rows = conn.execute(
            "SELECT rowid FROM v WHERE embedding MATCH vec_quantize_binary(?) AND k = ?",
            (q.tobytes(), n * 8),
        ).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    return search


CANDIDATES: dict[str, tuple[Callable[[np.ndarray, Path], None], Callable[[Path], Any], str]] = {
    "usearch HNSW i8 (M 16, ef 64), mmap view": (
        _usearch_build("i8"),
        _usearch_open(64),
        "usearch",
    ),
    "usearch HNSW i8 (M 16, ef 128), mmap view": (
        _usearch_build("i8"),
        _usearch_open(128),
        "usearch",
    ),
    "hnswlib HNSW f32 (M 16, ef 64), loaded": (_hnswlib_build, _hnswlib_open(64), "hnswlib"),
    "faiss IVF-SQ8 (4√n lists, nprobe 16), mmap": (
        _faiss_ivf_build,
        _faiss_ivf_open(16),
        "faiss-ivf",
    ),
    "faiss IVF-SQ8 (4√n lists, nprobe 48), mmap": (
        _faiss_ivf_build,
        _faiss_ivf_open(48),
        "faiss-ivf",
    ),
    "faiss HNSW-SQ8 (M 16, ef 64), mmap": (_faiss_hnsw_build, _faiss_hnsw_open(64), "faiss-hnsw"),
    "sqlite-vec bit[384] scan, 8× re-scored": (_vec_bit_build, _vec_bit_open, "sqlite-vec-bit"),
}


def rss() -> tuple[float, float]:
    """(VmRSS, RssFile) in MB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("RssFile", 0.0)


def query_phase(name: str, folder: Path) -> dict[str, Any]:
    """In a fresh process: open, search every query, re-score exactly, report."""
    before = rss()[0]
    began = time.perf_counter()
    search = CANDIDATES[name][1](folder)
    opened = time.perf_counter() - began
    qs = np.load(folder.parent / "queries.npy")
    truth = np.load(folder.parent / "truth.npy")
    vectors = np.load(folder.parent / "vectors.npy", mmap_mode="r")
    seconds, recall = [], []
    for q, want in zip(qs, truth, strict=True):
        began = time.perf_counter()
        cand = search(q, K * OVERFETCH)
        cand = cand[cand >= 0]
        scores = np.asarray(vectors[np.sort(cand)]) @ q
        top = np.sort(cand)[np.argsort(-scores)[:K]]
        seconds.append(time.perf_counter() - began)
        recall.append(len(set(top.tolist()) & set(want.tolist())) / K)
    now, mapped = rss()
    p50, p95 = ms_stats(seconds)
    return {
        "recall": float(np.mean(recall)),
        "p50": p50,
        "p95": p95,
        "open_s": opened,
        "rss_mb": now - before,
        "rss_file_mb": mapped,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--sets", default="real,random")
    ap.add_argument("--only", default="", help="comma-separated substrings of candidate names")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--query", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.query:
        print(json.dumps(query_phase(args.query[0], Path(args.query[1]))))
        return
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="tideline-ann-"))
    rows: list[dict[str, Any]] = []
    try:
        for which in args.sets.split(","):
            x, qs = (real_set if which == "real" else random_set)(args.n, args.queries)
            setdir = work / which
            setdir.mkdir()
            np.save(setdir / "vectors.npy", x)
            np.save(setdir / "queries.npy", qs)
            np.save(setdir / "truth.npy", exact(x, qs))
            built: dict[str, tuple[Path, float, int]] = {}
            for name, (build, _, family) in CANDIDATES.items():
                if args.only and not any(s in name for s in args.only.split(",")):
                    continue
                if family not in built:
                    folder = setdir / family
                    folder.mkdir()
                    began = time.perf_counter()
                    build(x, folder)
                    size = sum(f.stat().st_size for f in folder.iterdir())
                    built[family] = (folder, time.perf_counter() - began, size)
                folder, build_s, size = built[family]
                out = subprocess.run(
                    [sys.executable, __file__, "--query", name, str(folder)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                row = {"set": which, "name": name, "build_s": build_s, "size_mb": size / 2**20}
                row.update(json.loads(out.stdout))
                print(json.dumps(row), flush=True)
                rows.append(row)
            shutil.rmtree(setdir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    body = report(args, rows, load_before, os.getloadavg())
    print(body)
    if args.write:
        write_section("ann-choice", body)


def report(args: argparse.Namespace, rows: list[dict[str, Any]], before: Any, after: Any) -> str:
    lines = [
        "## Which approximate vector index (bench/ann_choice.py)",
        "",
        f"{args.n:,} vectors of 384 dims, {args.queries} queries, k={K}; every candidate's"
        f" {OVERFETCH * K} candidates re-scored exactly from float32. *real*: the e5 vectors of"
        f" {len(np.load(CACHE)['texts']):,} distinct LoCoMo turns and tldr lines replicated with"
        " noise (norm 0.15–0.45),"
        " queried by LoCoMo questions (four kinds); *random*: uniform unit vectors. Query p50/p95"
        " include the re-scoring; RSS is what the searching process (a fresh one) gained by"
        " opening the index and answering every query, *mapped* the part of its RSS that is the"
        f" file mapping. Machine: {machine()}; load average {before[0]:.2f} before,"
        f" {after[0]:.2f} after. Command: `bench/ann_choice.py {' '.join(sys.argv[1:])}`.",
        "",
        "| set | index | recall@10 | p50 ms | p95 ms | build s | open s | RSS MB | mapped MB | file MB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['set']} | {r['name']} | {r['recall']:.3f} | {r['p50']} | {r['p95']}"
            f" | {r['build_s']:.1f} | {r['open_s']:.2f} | {r['rss_mb']:.0f}"
            f" | {r['rss_file_mb']:.0f} | {r['size_mb']:.0f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
