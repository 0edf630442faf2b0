"""The time-window stage on questions that name their time (#32 item 5): LoCoMo temporal
questions (category 2) of conv-26 and conv-30, rephrased by hand to ask *what* happened in a
named time ("What did Gina open in March 2023?"; bench/data/locomo_timewords.jsonl, the original
question beside each), searched in their conversation's home with the product's defaults and
`search_time_window` off (0), at its default lift (1), doubled (2) and `restrict` — with the
turns' date lever (`turn_date_weight`, default 1) on, where the stage leaves turns to the lever
(`turns_window`), and off, where the stage alone reads the question's time for turns.

Per setting: evidence recall@5 (gold-in-top-5, the floor off), recall@10, Hit@1; and how many
questions the stage read a window from (the same for every setting but off).

    flock /work/embed.lock .venv/bin/python bench/locomo_timewords.py --cache /work/cache/timewords.db
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

DATA = Path(__file__).resolve().parent / "data" / "locomo_timewords.jsonl"
WINDOWS = ("0", "1", "2", "restrict")
#: (date lever, time window) pairs: the product's default is (1.0, "1")
SETTINGS = [(date, window) for date in (1.0, 0.0) for window in WINDOWS]


def run(cache: Path) -> str:
    items = [json.loads(line) for line in DATA.open(encoding="utf-8")]
    by_conv: dict[str, list[dict]] = defaultdict(list)
    for item in items:
        by_conv[item["conv"]].append(item)
    scores: dict[tuple[float, str], dict[str, list[float]]] = {
        s: defaultdict(list) for s in SETTINGS
    }
    windows = 0
    for conv, asked in sorted(by_conv.items()):
        with tempfile.TemporaryDirectory() as tmp:
            base = {"home": tmp, "cache_path": str(cache)}
            app = Tideline(Settings.load(overrides=base))
            app.memory.import_file(SHARED / "locomo" / f"{conv}.json", "locomo")
            app.close()
            for setting in SETTINGS:
                date, window = setting
                tuned = {"turn_date_weight": date, "search_time_window": window}
                app = Tideline(Settings.load(overrides={**base, **tuned}))
                ids = dict(app.db.execute("SELECT id, external_id FROM turns").fetchall())
                for item in asked:
                    gold = evidence_ids(item["evidence"])[0]
                    got = [
                        ids.get(h.id) for h in app.memory.search(item["q"], 10, min_score=0).hits
                    ]
                    s = scores[setting]
                    s["@5"].append(len(gold & set(got[:5])) / len(gold))
                    s["@10"].append(len(gold & set(got)) / len(gold))
                    s["hit1"].append(float(bool(got) and got[0] in gold))
                    if setting == (1.0, "1"):
                        windows += app.memory.window_for(item["q"]) is not None
                app.close()
    rows = [
        f"{len(items)} questions, a window read from {windows}",
        "",
        "| turn_date_weight | search_time_window | recall@5 | recall@10 | Hit@1 |",
        "|---:|---|---:|---:|---:|",
    ]
    for setting in SETTINGS:
        s = scores[setting]
        rows.append(
            f"| {setting[0]:g} | {setting[1]} | {statistics.mean(s['@5']):.3f} | {statistics.mean(s['@10']):.3f} |"
            f" {statistics.mean(s['hit1']):.3f} |"
        )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/work/cache/timewords.db"))
    print(run(ap.parse_args().cache))


if __name__ == "__main__":
    main()
