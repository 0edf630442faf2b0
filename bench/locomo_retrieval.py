"""LoCoMo turn retrieval: evidence recall@5/@10 per category for lex, vec and hybrid fusions.

Each conversation of ../shared/data/locomo is imported into its own fresh home (turns + real e5
embeddings); every question of categories 1–4 retrieves the top 10 turns, and recall@k is the share
of the question's evidence turns (LoCoMo `dia_id`s) among them. Malformed evidence ids are
normalised (`D8:6; D9:17` → two ids, `D:11:26` → `D11:26`); ids that cannot be read are dropped and
counted.

    .venv/bin/python bench/locomo_retrieval.py              # cold: embeds every turn (~2 min here)
    .venv/bin/python bench/locomo_retrieval.py --cache bench/.cache/embed-cache.db   # reuse vectors
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _report import machine, ms_stats, write_section

from tideline.app import Tideline
from tideline.config import Settings
from tideline.memory import TURNS, Memory
from tideline.search import Policy

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
# (mode, turn policy); the default hybrid runs first, so it pays the query embedding and the later
# modes reuse the cached query vector.
MODES = {
    "hybrid (rrf k=10: default)": ("hybrid", TURNS),
    "lex": ("lex", TURNS),
    "vec": ("vec", TURNS),
    "hybrid (rrf k=60)": ("hybrid", Policy(rrf_k=60)),
    "hybrid (rrf k=10, vec ×0.5)": ("hybrid", Policy(rrf_k=10, weights=(1.0, 0.5))),
    "hybrid (cosine + keyword boost)": ("hybrid", Policy(fusion="weighted", boost=0.3)),
}
_ID = re.compile(r"D:?(\d+):(\d+)")


def evidence_ids(raw: list[str]) -> tuple[set[str], int]:
    ids, dropped = set(), 0
    for item in raw:
        for part in re.split(r"[;,]", item.replace(" ", "")):
            if not part:
                continue
            m = _ID.fullmatch(part)
            if m:
                ids.add(f"D{int(m.group(1))}:{int(m.group(2))}")
            else:
                dropped += 1
    return ids, dropped


def run(cache: Path | None, k_max: int = 10) -> str:
    recall: dict[str, dict[int, dict[int, list[float]]]] = {
        m: {c: {5: [], 10: []} for c in CATEGORIES} for m in MODES
    }
    latency: dict[str, list[float]] = defaultdict(list)
    turns_total, import_seconds, dropped, questions = 0, 0.0, 0, 0
    for path in sorted(DATA.glob("*.json")):
        data = json.loads(path.read_text())
        with tempfile.TemporaryDirectory() as tmp:
            overrides = {
                "home": tmp,
                "cache_path": str(cache) if cache else str(Path(tmp) / "cache.db"),
            }
            app = Tideline(Settings.load(overrides=overrides))
            started = time.perf_counter()
            summary = app.memory.import_file(path, "locomo")
            import_seconds += time.perf_counter() - started
            turns_total += summary.turns_added
            ext = dict(app.db.execute("SELECT id, external_id FROM turns").fetchall())
            memories = {
                name: Memory(app.db, app.embedder, turn_policy=policy)
                for name, (_, policy) in MODES.items()
            }
            for qa in data["qa"]:
                cat = qa.get("category")
                if cat not in CATEGORIES:
                    continue
                gold, bad = evidence_ids(qa.get("evidence", []))
                dropped += bad
                if not gold:
                    continue
                questions += 1
                for name, (mode, _) in MODES.items():
                    t = time.perf_counter()
                    hits = memories[name].search_turns(qa["question"], k_max, mode=mode)
                    latency[name].append(time.perf_counter() - t)
                    got = [ext.get(h.id) for h in hits]
                    for k in (5, 10):
                        recall[name][cat][k].append(len(gold & set(got[:k])) / len(gold))
            app.close()
    header = (
        "| mode | "
        + " | ".join(f"{CATEGORIES[c]} @5 / @10" for c in CATEGORIES)
        + " | overall @5 | overall @10 |"
    )
    rows = [header, "|---|" + "---:|" * (len(CATEGORIES) + 2)]
    for name in MODES:
        cells = [
            f"{statistics.mean(recall[name][c][5]):.3f} / {statistics.mean(recall[name][c][10]):.3f}"
            for c in CATEGORIES
        ]
        all5 = [v for c in CATEGORIES for v in recall[name][c][5]]
        all10 = [v for c in CATEGORIES for v in recall[name][c][10]]
        rows.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {statistics.mean(all5):.3f} | {statistics.mean(all10):.3f} |"
        )
    lat = ["| mode | p50 ms | p95 ms |", "|---|---:|---:|"]
    for name, values in latency.items():
        p50, p95 = ms_stats(values)
        lat.append(f"| {name} | {p50} | {p95} |")
    cache_note = (
        f"embedding cache {cache} (vectors may be reused)"
        if cache
        else "a fresh embedding cache (every turn embedded)"
    )
    return "\n".join(
        [
            "## LoCoMo turn retrieval (bench/locomo_retrieval.py)",
            "",
            f"Machine: {machine()}.",
            f"5 conversations, {turns_total:,} turns, {questions} questions of categories 1–4 "
            f"({dropped} unreadable evidence ids dropped). Import with {cache_note}: "
            f"{import_seconds:.1f} s, {turns_total / import_seconds:.1f} turns/s including embedding.",
            "",
            "Evidence recall (share of a question's evidence turns in the top k), mean over questions:",
            "",
            *rows,
            "",
            "Search latency per query. The first row pays the query embedding; the rows after it reuse "
            "the cached query vector, so they show the search alone:",
            "",
            *lat,
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="reuse this embedding cache")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"LoCoMo data not found at {DATA}")
    body = run(args.cache)
    print(body)
    if not args.no_write:
        write_section("locomo-retrieval", body)


if __name__ == "__main__":
    main()
