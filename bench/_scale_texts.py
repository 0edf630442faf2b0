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


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from tideline.embed import E5Embedder

    passages, questions, kinds = texts_and_queries()
    print(f"{len(passages):,} passages, {len(questions):,} questions", flush=True)
    e5 = E5Embedder()
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
