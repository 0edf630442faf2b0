"""Questions in another language about English conversations (#37 item 5): LoCoMo single-hop
questions with their Russian and Chinese translations (bench/data/locomo_xling.jsonl, translated
by hand for this), each searched in its conversation's home with the product's defaults.

Per language: evidence recall@5 / @10 and Hit@1 with the floor off (the ranking), and the share of
questions whose evidence turn the default floor still shows in the top 10.

    flock /work/embed.lock .venv/bin/python bench/locomo_xling.py --cache /work/cache/floor37.db
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path

from _report import SHARED
from locomo_retrieval import evidence_ids

from tideline.app import Tideline
from tideline.config import Settings

DATA = Path(__file__).resolve().parent / "data" / "locomo_xling.jsonl"
LANGS = ("en", "ru", "zh")


def run(cache: Path) -> str:
    items = [json.loads(line) for line in DATA.open(encoding="utf-8")]
    by_conv: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        by_conv[item["conv"]].append(item)
    scores: dict[str, dict[str, list[float]]] = {lang: defaultdict(list) for lang in LANGS}
    for conv, asked in sorted(by_conv.items()):
        with tempfile.TemporaryDirectory() as tmp:
            app = Tideline(Settings.load(overrides={"home": tmp, "cache_path": str(cache)}))
            app.memory.import_file(SHARED / "locomo" / f"{conv}.json", "locomo")
            ids = dict(app.db.execute("SELECT id, external_id FROM turns").fetchall())
            for item in asked:
                gold = evidence_ids(item["evidence"])[0]
                for lang in LANGS:
                    q = item[lang]
                    got = [ids.get(h.id) for h in app.memory.search(q, 10, min_score=0).hits]
                    shown = [ids.get(h.id) for h in app.memory.search(q, 10).hits]
                    s = scores[lang]
                    s["@5"].append(len(gold & set(got[:5])) / len(gold))
                    s["@10"].append(len(gold & set(got)) / len(gold))
                    s["hit1"].append(float(bool(got) and got[0] in gold))
                    s["floored"].append(float(bool(gold & set(shown))))
            app.close()
    rows = [
        "| language | questions | recall@5 | recall@10 | Hit@1 | evidence shown with the floor |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for lang in LANGS:
        s = scores[lang]
        rows.append(
            f"| {lang} | {len(s['@5'])} | {statistics.mean(s['@5']):.3f} |"
            f" {statistics.mean(s['@10']):.3f} | {statistics.mean(s['hit1']):.3f} |"
            f" {statistics.mean(s['floored']):.3f} |"
        )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/work/cache/floor37.db"))
    print(run(ap.parse_args().cache))


if __name__ == "__main__":
    main()
