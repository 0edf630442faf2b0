"""Offline levers on the whole tldr library: fusion and vector variants from a warm cache.

    OMP_NUM_THREADS=1 .venv/bin/python bench/tldr_levers.py --cache /work/cache/tldr-items.db \
        [--reference-queries /work/cache/locomo-embed.db]

`bench/library_tldr.py --quality-only` measures policies through `Library.search`; this script
asks what the *inputs* of the fusion could give. It indexes the library from the cache (a miss
is an error, nothing is embedded), dumps every key vector, each query's vector and its lexical
key list (depth 300), and recomputes the library's rule in numpy (collapse each list to chunks
by the best key, RRF k = 60, lexical trust), which reproduces the library's table, then one
lever at a time. Rows marked "dev mean" estimate a mean query vector from the dev queries
themselves, held out in two folds (even ids centred by the odd ids' mean and back): they show
what a reference query set could give, not a shippable setting. Rows saying "query centred"
without it use the shipped reference means exactly as `search/_centre.py` does (the product's
rule); "RRF k=20, trust²" is the library's fusion since then, "linear trust floor 0.2" the one
before.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
from library_tldr import DATA, CacheOnly, build_library

from tideline.app import library_from, library_policy
from tideline.config import DEFAULTS
from tideline.embed import CachedEmbedder, E5Embedder
from tideline.library._collection_index import _lexical_text
from tideline.search import STOP_WORDS, analyse, retrieve
from tideline.search._centre import SHARE, reference_means

Key = tuple[int, int]
Ranker = Callable[[int], list[Key]]


def coverage(query: str, text: str) -> float:
    """The share of the query's content terms `text` holds (the library's trust, offline; in the
    product `_lexical.rescore` reads it from the best hit's term frequencies)."""
    stops = {t for w in STOP_WORDS for t in analyse(w).split()}
    content = set(analyse(query).split()) - stops
    if not content:
        return 1.0
    return len(content & set(analyse(text).split())) / len(content)


class Dump:
    """Everything the levers need, read once from an index built from the cache."""

    def __init__(self, cache: Path) -> None:
        queries = [json.loads(line) for line in (DATA / "queries.dev.jsonl").open(encoding="utf-8")]
        root = Path(tempfile.mkdtemp(prefix="tldr-levers-")) / "library"
        root.mkdir()
        build_library(root, None, queries)
        cached = CachedEmbedder(CacheOnly(E5Embedder()), cache)  # type: ignore[arg-type]
        lib = library_from(DEFAULTS, root, cached)
        lib.index()
        owners = [lib.index_of(c) for c in lib.layout().collections]
        scopes = [o.path_filter("all", "") for o in owners]
        self.text: dict[Key, str] = {}
        self.path: dict[Key, str] = {}
        self.parent: dict[Key, Key] = {}
        keys: list[Key] = []
        mats = []
        for n, o in enumerate(owners):
            for rid, path, parent, heading, text in o.db.execute(
                "SELECT id, path, parent, heading, text FROM chunks"
            ):
                self.text[(n, rid)] = _lexical_text(path, heading, text)
                self.path[(n, rid)] = path
                self.parent[(n, rid)] = (n, parent if parent is not None else rid)
            ids, m = o.text.vectors()
            keys += [(n, int(i)) for i in ids]
            mats.append(m)
        deep = replace(library_policy(DEFAULTS), depth=300)
        self.queries = queries
        self.lex: list[list[Key]] = []
        self.bm25: list[list[float]] = []
        for q in queries:
            hits = retrieve(scopes, q["query"], None, 10, "lex", deep).hits
            self.lex.append([(h.source, h.id) for h in hits])
            self.bm25.append([abs(h.lex_score or 0.0) for h in hits])
        self.qvec = _unit(np.vstack([cached.embed_query(q["query"]) for q in queries]))
        lib.close()
        self.keys = keys
        self.kvec = _unit(np.vstack(mats))
        self.chunks = sorted({self.parent[k] for k in keys})
        index = {c: i for i, c in enumerate(self.chunks)}
        self.key_chunk = np.array([index[self.parent[k]] for k in keys])


def _unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def script_language(text: str) -> str:
    """The language a query's script implies: Cyrillic → ru, kana → ja, Han → zh, else en."""
    if any("\u3040" <= ch <= "\u30ff" for ch in text):
        return "ja"
    if any("\u4e00" <= ch <= "\u9fff" for ch in text):
        return "zh"
    if any("\u0400" <= ch <= "\u04ff" for ch in text):
        return "ru"
    return "en"


def collapse(keys: list[Key], parent: dict[Key, Key]) -> list[Key]:
    """A ranked key list to chunks, each at its best key's place (`library/_aggregate`)."""
    return list(dict.fromkeys(parent[k] for k in keys))


def rrf(lists: list[list[Key]], weights: list[float], k: int = 60) -> list[Key]:
    score: dict[Key, float] = defaultdict(float)
    for ranked, w in zip(lists, weights, strict=True):
        for pos, c in enumerate(ranked, 1):
            score[c] += w / (k + pos)
    return sorted(score, key=lambda c: -score[c])


class Levers:
    """The rows: each builds a ranked chunk list per query from the dump."""

    def __init__(self, d: Dump, reference: np.ndarray | None) -> None:
        self.d = d
        self.reference = reference
        self.sim = d.qvec @ d.kvec.T
        means = np.zeros((len(d.chunks), d.kvec.shape[1]), dtype=np.float32)
        np.add.at(means, d.key_chunk, d.kvec)
        self.cvec = d.qvec @ _unit(means).T
        self.trust0 = [self._trust(i, 0.0) for i in range(len(d.queries))]
        self.trust2 = [self._trust(i, 0.2) for i in range(len(d.queries))]

    def _trust(self, i: int, floor: float) -> float:
        """The lexical list's weight by the linear rule the rows were first measured with,
        floor + (1 − floor) · coverage (the library now squares the coverage: "trust²")."""
        hits = self.d.lex[i]
        cover = coverage(self.d.queries[i]["query"], self.d.text[hits[0]]) if hits else 0.0
        return floor + (1.0 - floor) * cover if hits else 0.0

    def lex(self, i: int, depth: int = 40) -> list[Key]:
        return collapse(self.d.lex[i][:depth], self.d.parent)

    def vec(self, i: int, depth: int = 40, sim: np.ndarray | None = None) -> list[Key]:
        s = (self.sim if sim is None else sim)[i]
        top = np.argpartition(-s, depth)[:depth]
        return collapse([self.d.keys[j] for j in top[np.argsort(-s[top])]], self.d.parent)

    def hybrid(
        self, i: int, weight: float, depth: int = 40, sim: np.ndarray | None = None
    ) -> list[Key]:
        return rrf([self.lex(i, depth), self.vec(i, depth, sim)], [weight, 1.0])

    def fused(self, sim: np.ndarray) -> Ranker:
        """The library's fusion now: RRF k = 20, the lexical list weighted by coverage²."""
        return lambda i: rrf([self.lex(i), self.vec(i, sim=sim)], [self.trust0[i] ** 2, 1.0], 20)

    def best_key(self, i: int, sim: np.ndarray | None = None) -> np.ndarray:
        """Each chunk's best key cosine for query `i` (the vector list's chunk score)."""
        best = np.full(len(self.d.chunks), -1.0, dtype=np.float32)
        np.maximum.at(best, self.d.key_chunk, (self.sim if sim is None else sim)[i])
        return best

    def centroid(self, i: int, lam: float, depth: int = 40) -> list[Key]:
        """Chunks by λ · best key cosine + (1 − λ) · cosine of the mean of the chunk's key
        vectors (a chunk vector that costs no embedding)."""
        s = lam * self.best_key(i) + (1 - lam) * self.cvec[i]
        top = np.argpartition(-s, depth)[:depth]
        return [self.d.chunks[j] for j in top[np.argsort(-s[top])]]

    def convex(
        self, i: int, alpha: float, depth: int = 40, sim: np.ndarray | None = None
    ) -> list[Key]:
        """Score fusion on chunks: α · BM25 / best + (1 − α) · min–max best-key cosine."""
        lex: dict[Key, float] = {}
        for k, score in zip(self.d.lex[i][:depth], self.d.bm25[i][:depth], strict=True):
            lex.setdefault(self.d.parent[k], score)
        best = self.best_key(i, sim)
        index = {c: n for n, c in enumerate(self.d.chunks)}
        vec = self.vec(i, depth, sim)
        lo, hi = min(best[index[c]] for c in vec), max(best[index[c]] for c in vec)
        top = max(lex.values(), default=1.0) or 1.0

        def score(c: Key) -> float:
            v = (best[index[c]] - lo) / (hi - lo) if hi > lo and c in index else 0.0
            return alpha * lex.get(c, 0.0) / top + (1 - alpha) * max(0.0, float(v))

        return sorted(set(lex) | set(vec), key=lambda c: -score(c))

    def centred(self, queries_only: bool, mean: np.ndarray | None = None) -> np.ndarray:
        """Cosine after removing the mean query direction (and the mean key direction unless
        `queries_only`); `mean` None: the dev queries' own mean, held out in two folds."""
        d = self.d
        if mean is None:
            even = np.array([int(q["id"].split("-")[1]) % 2 == 0 for q in d.queries])
            q = np.where(
                even[:, None], d.qvec - d.qvec[~even].mean(0), d.qvec - d.qvec[even].mean(0)
            )
        else:
            q = d.qvec - mean
        k = d.kvec if queries_only else d.kvec - d.kvec.mean(0)
        return _unit(q) @ _unit(k).T

    def shipped(self, pick: str, keys: str = "none", share: float = SHARE) -> np.ndarray:
        """Cosine after query centring by the shipped reference means (`search/_centre.py`):
        `pick` the mean by "nearest" (cosine, the product's rule), "script" (Cyrillic → ru,
        kana → ja, Han → zh, else en), "all" (one mean of every language) or "en"; `share` of
        it taken out; `keys` "none", "one" (the library's key mean) or "collection" (each
        collection's own)."""
        d = self.d
        ref = reference_means()[E5Embedder.model_id]
        langs = list(ref.languages)
        if pick == "nearest":
            mean = ref.means[[ref.language(v) for v in d.qvec]]
        elif pick == "script":
            mean = ref.means[[langs.index(script_language(q["query"])) for q in d.queries]]
        else:
            mean = ref.means.mean(0) if pick == "all" else ref.means[langs.index(pick)]
        return _unit(d.qvec - share * mean) @ _unit(self._keys(keys)).T

    def _keys(self, how: str) -> np.ndarray:
        k = self.d.kvec
        if how == "one":
            return k - k.mean(0)
        if how == "collection":
            source = np.array([s for s, _ in self.d.keys])
            out = k.copy()
            for s in np.unique(source):
                out[source == s] -= k[source == s].mean(0)
            return out
        return k

    def language_accuracy(self) -> str:
        """How often the nearest reference mean is the query's own language (exact commands
        count as en), against script detection."""
        ref = reference_means()[E5Embedder.model_id]
        want = [q["lang"] for q in self.d.queries]
        near = [ref.languages[ref.language(v)] for v in self.d.qvec]
        script = [script_language(q["query"]) for q in self.d.queries]
        acc = [np.mean([a == b for a, b in zip(got, want, strict=True)]) for got in (near, script)]
        return f"language of the 750 queries: nearest mean {acc[0]:.3f}, script {acc[1]:.3f}"

    def rows(self) -> dict[str, Ranker]:
        t2, t0 = self.trust2, self.trust0
        rows: dict[str, Ranker] = {
            "lex": self.lex,
            "vec": self.vec,
            "**default**: RRF k=60, trust floor 0.2, depth 40": lambda i: self.hybrid(i, t2[i]),
            "depth 100 keys per list": lambda i: self.hybrid(i, t2[i], 100),
            "trust floor 0": lambda i: self.hybrid(i, t0[i]),
            "trust² (floor 0)": lambda i: self.hybrid(i, t0[i] ** 2),
            "lexical list only when the query is fully covered": lambda i: self.hybrid(
                i, float(t0[i] >= 0.99)
            ),
            "convex fusion α 0.3 (no trust)": lambda i: self.convex(i, 0.3),
            "convex fusion α 0.5 (no trust)": lambda i: self.convex(i, 0.5),
            "vec by chunk centroid (mean of its key vectors)": lambda i: self.centroid(i, 0.0),
            "vec by 0.7 · best key + 0.3 · centroid": lambda i: self.centroid(i, 0.7),
            "hybrid with the centroid list as a third RRF list": lambda i: rrf(
                [self.lex(i), self.vec(i), self.centroid(i, 0.0)], [t2[i], 1.0, 1.0]
            ),
        }
        both = self.centred(queries_only=False)
        qonly = self.centred(queries_only=True)
        rows |= {
            "vec, keys and queries centred (dev mean)": lambda i: self.vec(i, sim=both),
            "vec, queries centred only (dev mean)": lambda i: self.vec(i, sim=qonly),
            "hybrid, centred (dev mean), trust 0.2": lambda i: self.hybrid(i, t2[i], sim=both),
            "hybrid, centred (dev mean), trust²": lambda i: self.hybrid(i, t0[i] ** 2, sim=both),
        }
        near = self.shipped("nearest")
        sims = {
            "query centred: whole mean": self.shipped("nearest", share=1.0),
            "query centred by script": self.shipped("script"),
            "query centred: one mean of all 7 languages": self.shipped("all"),
            "query centred: the en mean for every query": self.shipped("en"),
            "keys centred per collection alone": self.shipped("en", "collection", share=0.0),
            "query centred + keys centred (one key mean)": self.shipped("nearest", "one"),
            "query centred + keys centred per collection": self.shipped("nearest", "collection"),
        }
        rows["fusion alone: RRF k=20, trust² (floor 0)"] = self.fused(self.sim)
        rows["vec, query centred (¾ of the nearest mean)"] = partial(self.vec, sim=near)
        for name, sim in sims.items():
            rows[f"vec, {name}"] = partial(self.vec, sim=sim)
        rows |= {
            "hybrid, query centred, RRF k=60, linear trust floor 0.2": lambda i: self.hybrid(
                i, t2[i], sim=near
            ),
            "**hybrid, query centred, RRF k=20, trust² (the default)**": self.fused(near),
            "hybrid, query centred whole mean, RRF k=20, trust²": self.fused(
                sims["query centred: whole mean"]
            ),
            "hybrid, query + keys centred per collection, RRF k=20, trust²": self.fused(
                sims["query centred + keys centred per collection"]
            ),
            "hybrid, query centred, convex α 0.3": lambda i: self.convex(i, 0.3, sim=near),
        }
        if self.reference is not None:
            ref = self.centred(queries_only=True, mean=self.reference.mean(0))
            rows |= {
                "vec, queries centred by the reference questions' mean": lambda i: self.vec(
                    i, sim=ref
                ),
                "hybrid, same, trust²": lambda i: self.hybrid(i, t0[i] ** 2, sim=ref),
            }
        return rows


def table(d: Dump, rows: dict[str, Ranker]) -> str:
    groups = [*sorted({(q["kind"], q["lang"]) for q in d.queries}), ("all", "all")]
    lines = [
        "| variant | " + " | ".join(f"{k} {lang}" for k, lang in groups) + " |",
        "|---|" + "---|" * len(groups),
    ]
    for name, ranker in rows.items():
        cells: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        for i, q in enumerate(d.queries):
            files = list(dict.fromkeys(d.path[c] for c in ranker(i)))
            rank = files.index(q["target"]) + 1 if q["target"] in files else 99
            hit = (float(rank <= 5), 1.0 / rank if rank <= 10 else 0.0)
            cells[(q["kind"], q["lang"])].append(hit)
            cells[("all", "all")].append(hit)
        values = [np.array(cells[g]).mean(0) for g in groups]
        lines.append(f"| {name} | " + " | ".join(f"{r:.2f} / {m:.2f}" for r, m in values) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, required=True, help="a warm library_tldr cache")
    parser.add_argument(
        "--reference-queries",
        type=Path,
        default=None,
        help="an embedding cache whose query vectors make a reference mean (not the dev set)",
    )
    args = parser.parse_args()
    if not args.cache.exists():
        sys.exit(f"error: {args.cache} not found; run bench/library_tldr.py --cache it first")
    reference = None
    if args.reference_queries is not None:
        db = sqlite3.connect(f"file:{args.reference_queries}?mode=ro", uri=True)
        rows = db.execute("SELECT vector FROM embeddings WHERE kind = 'q'").fetchall()
        reference = _unit(np.vstack([np.frombuffer(b, dtype=np.float32) for (b,) in rows]))
    d = Dump(args.cache)
    levers = Levers(d, reference)
    print(levers.language_accuracy())
    print(table(d, levers.rows()))


if __name__ == "__main__":
    main()
