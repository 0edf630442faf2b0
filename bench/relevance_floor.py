"""Memory search's relevance floor, calibrated on LoCoMo: cosines of related and unrelated pairs,
and what each candidate floor costs in evidence recall and buys in "nothing relevant" answers.

Each conversation of ../shared/data/locomo is imported into its own fresh home (real e5). For
every question of categories 1–4:
- related: the cosine between the question and each of its evidence turns;
- unrelated (same conversation): the question against 20 random turns that are not evidence;
- stranger: the question against the *next* conversation's home, whose turns never mention its
  people — the best cosine there is what a search that should find nothing returns today.
Recall: `Memory.search(include_turns=True, k=10, min_score=f)` — the real floored path — against
the floor off, on the calibration conversations (conv-26, conv-30) and the dev ones (the rest).

    .venv/bin/python bench/relevance_floor.py --cache bench/.cache/embed-cache.db
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
from pathlib import Path

import numpy as np
from _report import SHARED, machine, pct, write_section

from tideline.app import Tideline
from tideline.config import Settings
from tideline.search import query_vector

DATA = SHARED / "locomo"
CALIBRATION = ("conv-26", "conv-30")
#: Relevance floors (issue 26: a floor is a relevance, 0–1, `tideline.search._score`).
FLOORS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10)
K = 10

from locomo_retrieval import evidence_ids  # noqa: E402  (the same id normalisation)


def _questions(data: dict) -> list[tuple[str, set[str]]]:
    out = []
    for qa in data["qa"]:
        if qa.get("category") in (1, 2, 3, 4):
            gold, _ = evidence_ids(qa.get("evidence", []))
            if gold:
                out.append((qa["question"], gold))
    return out


def run(cache: Path | None) -> str:
    rng = random.Random(13)
    paths = sorted(DATA.glob("*.json"))
    convs = {p.stem: _questions(json.loads(p.read_text())) for p in paths}
    related: list[float] = []
    unrelated: list[float] = []
    stranger_best: list[float] = []
    recall: dict[str, dict[float, list[float]]] = {"calibration": {}, "dev": {}}
    empty: dict[float, int] = {f: 0 for f in FLOORS}
    strangers = 0
    for n, path in enumerate(paths):
        with tempfile.TemporaryDirectory() as tmp:
            overrides = {"home": tmp, "cache_path": str(cache or Path(tmp) / "cache.db")}
            app = Tideline(Settings.load(overrides=overrides))
            app.memory.import_file(path, "locomo")
            ext = dict(app.db.execute("SELECT id, external_id FROM turns").fetchall())
            by_ext = {v: k for k, v in ext.items()}
            ids = sorted(ext)
            split = "calibration" if path.stem in CALIBRATION else "dev"
            for question, gold in convs[path.stem]:
                qvec, _ = query_vector(app.embedder, question)
                assert qvec is not None
                cos = {i: 1.0 - d for i, d in app.memory.raw.index.distances(qvec, ids).items()}
                gold_ids = [by_ext[g] for g in gold if g in by_ext]
                related += [cos[i] for i in gold_ids if i in cos]
                others = [i for i in ids if i not in gold_ids]
                unrelated += [cos[i] for i in rng.sample(others, min(20, len(others)))]
                for f in FLOORS:
                    hits = app.memory.search(
                        question, K, include_turns=True, qvec=qvec, min_score=f
                    ).hits
                    got = {ext.get(h.id) for h in hits if h.type == "turn"}
                    recall[split].setdefault(f, []).append(len(gold & got) / len(gold))
            other = paths[(n + 1) % len(paths)].stem
            for question, _ in convs[other]:
                qvec, _ = query_vector(app.embedder, question)
                assert qvec is not None
                best = 1.0 - min(app.memory.raw.index.distances(qvec, ids).values())
                stranger_best.append(best)
                strangers += 1
                for f in FLOORS:
                    found = app.memory.search(
                        question, K, include_turns=True, qvec=qvec, min_score=f
                    ).hits
                    empty[f] += not found
            app.close()
    return _report(related, unrelated, stranger_best, recall, empty, strangers, cache)


def _dist(values: list[float]) -> str:
    return " | ".join(
        f"{v:.3f}"
        for v in (
            pct(values, 5),
            pct(values, 25),
            statistics.median(values),
            pct(values, 75),
            pct(values, 95),
        )
    )


def _report(
    related: list[float],
    unrelated: list[float],
    stranger: list[float],
    recall: dict[str, dict[float, list[float]]],
    empty: dict[float, int],
    strangers: int,
    cache: Path | None,
) -> str:
    rows = [
        "| pairs | n | p5 | p25 | median | p75 | p95 |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| question ↔ its evidence turn | {len(related)} | {_dist(related)} |",
        f"| question ↔ a random turn of its conversation | {len(unrelated)} | {_dist(unrelated)} |",
        f"| question ↔ best turn of another conversation | {len(stranger)} | {_dist(stranger)} |",
    ]
    table = [
        "| floor | recall@10 calibration | recall@10 dev | loss on dev (pts) | "
        "evidence pairs above | unrelated pairs above | strangers answered “nothing” |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base_dev = statistics.mean(recall["dev"][0.0])
    for f in FLOORS:
        cal, dev = statistics.mean(recall["calibration"][f]), statistics.mean(recall["dev"][f])
        above_r = float(np.mean([v >= f for v in related]))
        above_u = float(np.mean([v >= f for v in unrelated]))
        table.append(
            f"| {f:.2f} | {cal:.3f} | {dev:.3f} | {100 * (base_dev - dev):.1f} | "
            f"{above_r:.1%} | {above_u:.1%} | {empty[f] / strangers:.1%} |"
        )
    return "\n".join(
        [
            "## Memory search relevance floor (bench/relevance_floor.py)",
            "",
            f"Machine: {machine()}. Bundled e5 (multilingual-e5-small, q4); "
            + ("a shared embedding cache." if cache else "a fresh embedding cache."),
            "",
            "Cosine similarity of e5 pairs on LoCoMo (categories 1–4):",
            "",
            *rows,
            "",
            "Each floor on `tideline search --turns -k 10` (recall: share of a question's evidence "
            "turns in the top 10; calibration = conv-26, conv-30; dev = the other three; "
            "strangers: every question of the next conversation searched in this one's home, "
            "where nothing is relevant):",
            "",
            *table,
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
        write_section("relevance-floor", body)


if __name__ == "__main__":
    main()
