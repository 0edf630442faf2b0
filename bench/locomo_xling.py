"""Questions in another language about English conversations (#37 item 5): LoCoMo single-hop
questions with their Russian and Chinese translations (bench/data/locomo_xling.jsonl, translated
by hand for this: 18 of conv-26, then 8 of each other dev conversation), each searched in its
conversation's home.

Per language and variant: evidence recall@5 / @10 and Hit@1 with the floor off (the ranking),
and the share of questions whose evidence turn the default floor still shows in the top 10.
The variants, measured in one run: the product's defaults; `before`, the same with the
cross-lingual rule off (`Policy.scripts`: the lexical list weighted by the share of the query's
terms in the records' scripts, the query vector centred, names matched in Cyrillic — what main
did before it); `vector`, the vector list alone (the model's own ceiling, uncentred) and
`vector, centred`.

    flock /work/embed.lock .venv/bin/python bench/locomo_xling.py --cache /work/cache/e5.db
    .venv/bin/python bench/locomo_xling.py --cache /work/cache/e5.db --cache-only   # all cached
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from _locomo_levers import CacheOnly
from _report import SHARED
from locomo_retrieval import evidence_ids

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import CachedEmbedder
from tideline.search import Policy

DATA = Path(__file__).resolve().parent / "data" / "locomo_xling.jsonl"
LANGS = ("en", "ru", "zh")
#: The turn levers, off for the vector-list rows (they rank the vector list alone).
NO_LEVERS = {
    "date_weight": 0.0,
    "memory_weight": 0.0,
    "speaker_weight": 0.0,
    "answer_weight": 0.0,
    "session_weight": 0.0,
    "window": 0.0,
}


def _variants(default: Policy) -> dict[str, tuple[str, Policy]]:
    """Name → (mode, policy) of each row."""
    vector = replace(default, scripts=False, **NO_LEVERS)  # type: ignore[arg-type]
    return {
        "default": ("hybrid", default),
        "before (`scripts` off)": ("hybrid", replace(default, scripts=False)),
        "vector list alone": ("vec", vector),
        "vector list alone, centred": ("vec", replace(vector, centre=True)),
    }


def run(cache: Path, subset: int | None = None, cache_only: bool = False) -> str:
    items = [json.loads(line) for line in DATA.open(encoding="utf-8")][:subset]
    by_conv: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        by_conv[item["conv"]].append(item)
    scores: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    names: list[str] = []
    for conv, asked in sorted(by_conv.items()):
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings.load(overrides={"home": tmp, "cache_path": str(cache)})
            only = CachedEmbedder(CacheOnly(), cache) if cache_only else None
            app = Tideline(settings, embedder=only)
            app.memory.import_file(SHARED / "locomo" / f"{conv}.json", "locomo")
            ids = dict(app.db.execute("SELECT id, external_id FROM turns").fetchall())
            variants = _variants(app.memory.turn_policy)
            names = list(variants)
            floor = app.memory.min_score
            for item in asked:
                gold = evidence_ids(item["evidence"])[0]
                for lang in LANGS:
                    q = item[lang]
                    for name, (mode, policy) in variants.items():
                        app.memory.min_score = 0.0
                        found = app.memory.search_turns(q, 10, mode, policy)
                        got = [ids.get(h.id) for h in found]
                        app.memory.min_score = floor
                        shown = [
                            ids.get(h.id) for h in app.memory.search_turns(q, 10, mode, policy)
                        ]
                        s = scores[(lang, name)]
                        s["@5"].append(len(gold & set(got[:5])) / len(gold))
                        s["@10"].append(len(gold & set(got)) / len(gold))
                        s["hit1"].append(float(bool(got) and got[0] in gold))
                        s["floored"].append(float(bool(gold & set(shown))))
            app.close()
    rows = [
        "| language | variant | questions | recall@5 | recall@10 | Hit@1 |"
        " evidence shown with the floor |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for lang in LANGS:
        for name in names:
            s = scores[(lang, name)]
            rows.append(
                f"| {lang} | {name} | {len(s['@5'])} | {statistics.mean(s['@5']):.3f} |"
                f" {statistics.mean(s['@10']):.3f} | {statistics.mean(s['hit1']):.3f} |"
                f" {statistics.mean(s['floored']):.3f} |"
            )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/work/cache/e5.db"))
    ap.add_argument(
        "--first", type=int, default=None, help="only the first N questions (18: conv-26's)"
    )
    ap.add_argument(
        "--cache-only", action="store_true", help="embed nothing (no lock needed; see CacheOnly)"
    )
    args = ap.parse_args()
    print(run(args.cache, args.first, args.cache_only))


if __name__ == "__main__":
    main()
