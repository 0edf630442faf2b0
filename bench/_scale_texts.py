"""Real texts and their e5 vectors for the scale benchmark (issue 25), embedded once and cached.

The texts: every distinct LoCoMo turn (as search sees it: "Speaker: words") and distinct tldr
lines (page summaries, example descriptions, then command lines) up to `TEXTS` in all; the
queries: LoCoMo's questions of the four answerable kinds (1 multi-hop, 2 temporal, 3
open-domain, 4 single-hop). Vectors come from the bundled e5 (`E5Embedder`), passages and
queries with their own prefixes, and are written to `/work/cache/scale-texts.npz`:
`texts`, `vectors` (float32, unit), `queries`, `query_kinds`, `query_vectors`.

    flock /work/embed.lock .venv/bin/python bench/_scale_texts.py    # ~15 min of e5, once
    flock /work/embed.lock .venv/bin/python bench/_scale_texts.py --slices 2   # 2 more slices
    .venv/bin/python bench/_scale_texts.py --finish    # the cache from the slices done so far

`--from-caches LIBRARY` embeds nothing: it pairs texts with vectors other runs already cached —
LoCoMo turns in `/work/cache/locomo-embed.db` (`bench/locomo_retrieval.py --cache`), the tldr
library's chunks and item keys in `/work/cache/tldr-items.db` (`bench/library_tldr.py --cache
… --warm`; LIBRARY is that run's library folder, whose `.memo/index.db` files hold the chunk
texts: the cache keeps only hashes) — plus this cache's own slices, and writes
`/work/cache/scale-texts-real.npz` (the same arrays):

    .venv/bin/python bench/_scale_texts.py --from-caches /tmp/memo-bench-…/library

`--cache FILE` (a `CachedEmbedder` file, e.g. the shared `/work/cache/e5.db`) looks every text
and question up there first and keeps what it embeds there: LoCoMo's turns and questions, which
the LoCoMo benchmarks have cached, cost nothing.

`--cache-only FILE` embeds nothing: the texts and questions FILE already holds (no lock needed;
fewer distinct texts when it lacks some).

`--slices N` embeds at most N slices of 1,024 texts and writes the cache: on a shared machine take
the lock per run and let other benchmarks in between, e.g.
`until [ -f /work/cache/scale-texts.part31.npy ]; do flock … --slices 1; sleep 60; done`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _report import SHARED

CACHE = Path(os.environ.get("TIDELINE_BENCH_CACHE", "/work/cache")) / "scale-texts.npz"
TEXTS = 32_000
KINDS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def _data() -> Path:
    if (SHARED / "locomo").is_dir():
        return SHARED
    raise SystemExit(f"../shared/data not found (looked in {SHARED}; set TIDELINE_SHARED_DATA)")


def texts_and_queries(limit: int = TEXTS) -> tuple[list[str], list[str], list[str]]:
    """(passages, questions, their kinds): LoCoMo turns first, then tldr lines to `limit`."""
    base = _data()
    passages: dict[str, None] = {}
    questions: dict[str, str] = {}
    for path in sorted((base / "locomo").glob("*.json")):
        conv = json.loads(path.read_text("utf-8"))
        for key, value in conv.items():
            if key.startswith("session_") and isinstance(value, list):
                for turn in value:
                    passages[f"{turn['speaker']}: {turn['text']}"] = None
        for qa in conv.get("qa", []):
            if qa.get("category") in KINDS and qa.get("question"):
                questions.setdefault(qa["question"], KINDS[qa["category"]])
    prose: dict[str, None] = {}
    commands: dict[str, None] = {}
    for page in sorted((base / "tldr" / "library").rglob("*.md")):
        for line in page.read_text("utf-8").splitlines():
            line = line.strip()
            if line.startswith(("- ", "> ")) and len(line) > 8:
                prose[line[2:].strip()] = None
            elif line.startswith("`") and len(line) > 6:
                commands[line.strip("`")] = None
    # interleaved (conversation, prose, command), so the first slices embedded already mix them
    turns, pools = list(passages), [list(prose), list(commands)]
    mixed: dict[str, None] = {}
    for n in range(max(len(turns), *map(len, pools))):
        for pool in (turns, *pools):
            if n < len(pool) and len(mixed) < limit:
                mixed.setdefault(pool[n], None)
    return list(mixed), list(questions), list(questions.values())


def _cached(
    path: Path, texts: dict[str, None], model: str, kind: str = "d"
) -> dict[str, np.ndarray]:
    """The vectors (`kind` "d": documents, "q": queries) a `CachedEmbedder` file holds for
    these texts (keyed by hash)."""
    import apsw

    from tideline.embed._cache import text_hash

    by_hash = {text_hash(t): t for t in texts}
    found: dict[str, np.ndarray] = {}
    db = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    rows = db.execute(
        "SELECT hash, vector FROM embeddings WHERE model_id = ? AND kind = ?", (model, kind)
    )
    for h, blob in rows:
        text = by_hash.get(bytes(h))
        if text is not None:
            found[text] = np.frombuffer(blob, dtype=np.float32)
    db.close()
    return found


def from_caches(library: Path) -> None:
    """Texts paired with the vectors earlier runs cached (see the module docstring)."""
    import apsw

    from tideline.embed import E5Embedder
    from tideline.library._chunker import embed_text

    model = E5Embedder.model_id
    old = np.load(CACHE)
    pairs: dict[str, np.ndarray] = dict(zip(map(str, old["texts"]), old["vectors"], strict=True))
    turns: dict[str, None] = {}
    for path in sorted((_data() / "locomo").glob("*.json")):
        conv = json.loads(path.read_text("utf-8"))
        for key, value in conv.items():
            if key.startswith("session_") and isinstance(value, list):
                for turn in value:
                    turns[f"{turn['speaker']}: {turn['text']}"] = None
    got = _cached(CACHE.with_name("locomo-embed.db"), turns, model)
    print(f"LoCoMo turns: {len(got):,} of {len(turns):,} in the cache", flush=True)
    pairs.update(got)
    chunks: dict[str, None] = {}
    for index in sorted(library.glob("*/.memo/index.db")):
        db = apsw.Connection(
            f"file:{index}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        )
        for heading, text in db.execute("SELECT heading, text FROM chunks"):
            chunks[embed_text(heading, text)] = None
        db.close()
    got = _cached(CACHE.with_name("tldr-items.db"), chunks, model)
    print(f"tldr chunks and keys: {len(got):,} of {len(chunks):,} in the cache", flush=True)
    pairs.update(got)
    out = CACHE.with_name("scale-texts-real.npz")
    tmp = out.with_suffix(".tmp.npz")
    np.savez(
        tmp,
        texts=np.array(list(pairs)),
        vectors=np.stack(list(pairs.values())).astype(np.float32),
        queries=old["queries"],
        query_kinds=old["query_kinds"],
        query_vectors=old["query_vectors"],
        model_id=np.array(model),
    )
    tmp.replace(out)
    print(f"{len(pairs):,} distinct texts with vectors: wrote {out}", flush=True)


def cache_only(path: Path) -> None:
    """The texts and questions a `CachedEmbedder` file already holds, nothing embedded (see the
    module docstring): fewer distinct texts than `TEXTS` when the file lacks some."""
    from tideline.embed import E5Embedder

    model = E5Embedder.model_id
    passages, questions, kinds = texts_and_queries()
    docs = _cached(path, dict.fromkeys(passages), model)
    asked = _cached(path, dict.fromkeys(questions), model, "q")
    kept = [(q, k) for q, k in zip(questions, kinds, strict=True) if q in asked]
    tmp = CACHE.with_suffix(".tmp.npz")
    np.savez(
        tmp,
        texts=np.array(list(docs)),
        vectors=np.stack(list(docs.values())).astype(np.float32),
        queries=np.array([q for q, _ in kept]),
        query_kinds=np.array([k for _, k in kept]),
        query_vectors=np.stack([asked[q] for q, _ in kept]).astype(np.float32),
        model_id=np.array(model),
    )
    tmp.replace(CACHE)
    print(f"{len(docs):,} texts, {len(kept):,} questions from {path}: wrote {CACHE}", flush=True)


def main() -> None:
    if "--cache-only" in sys.argv:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        cache_only(Path(sys.argv[sys.argv.index("--cache-only") + 1]))
        return
    if "--from-caches" in sys.argv:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from_caches(Path(sys.argv[sys.argv.index("--from-caches") + 1]))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from tideline.embed import CachedEmbedder, E5Embedder

    passages, questions, kinds = texts_and_queries()
    print(f"{len(passages):,} passages, {len(questions):,} questions", flush=True)
    e5: E5Embedder | CachedEmbedder = E5Embedder()
    if "--cache" in sys.argv:
        e5 = CachedEmbedder(e5, sys.argv[sys.argv.index("--cache") + 1])
    began = time.perf_counter()
    asked = CACHE.with_name(f"{CACHE.stem}.queries.npy")
    if not asked.exists():
        np.save(asked, np.stack([e5.embed_query(q) for q in questions]).astype(np.float32))
        print(f"{len(questions)} questions embedded", flush=True)
    qvecs = np.load(asked)
    finish = "--finish" in sys.argv  # write the cache from the slices done so far
    budget = int(sys.argv[sys.argv.index("--slices") + 1]) if "--slices" in sys.argv else None
    parts = []
    for start in range(0, len(passages), 1024):
        # each slice is kept as it is done: a run cut short resumes where it stopped
        part = CACHE.with_name(f"{CACHE.stem}.part{start // 1024}.npy")
        if part.exists():
            parts.append(np.load(part))
            continue
        if finish or budget == 0:
            break
        if budget is not None:
            budget -= 1
        parts.append(e5.embed_documents(passages[start : start + 1024]))
        np.save(part, parts[-1])
        done = start + len(parts[-1])
        rate = done / (time.perf_counter() - began)
        print(f"{done:,} embedded ({rate:.0f}/s)", flush=True)
    done = sum(len(p) for p in parts)
    passages = passages[:done]
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    tmp = CACHE.with_suffix(".tmp.npz")
    np.savez(
        tmp,
        texts=np.array(passages),
        vectors=np.concatenate(parts).astype(np.float32),
        queries=np.array(questions),
        query_kinds=np.array(kinds),
        query_vectors=qvecs.astype(np.float32),
        model_id=np.array(e5.model_id),
    )
    tmp.replace(CACHE)
    print(f"{done:,} passages in the cache", flush=True)
    print(f"wrote {CACHE} in {time.perf_counter() - began:.0f} s", flush=True)


if __name__ == "__main__":
    main()
