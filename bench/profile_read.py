"""What Sleep's read of the profile costs, and what it costs the agent's writers.

`Profile.read()` counts what backs each live fact (its sessions, the valid-time span of its
evidence: `profile/_backing.py`) in slices of `BACKING_SLICE` facts, each under the shared lock
on its own. This measures, for profiles of N live facts with 3 evidence turns each (300
sessions): the read (median, p95), the facts' plain listing as the baseline (what the read held
the lock for before the backing existed), and how long a writer (`sync_turn` in a second thread,
as an agent talking during a Sleep) waits while reads run.

    .venv/bin/python bench/profile_read.py [--sizes 300 1000 3000] [--reads 9]

Writes the `profile-read` section of docs/benchmarks-history.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _report import machine, ms_stats, pct, write_section

from tideline.app import Tideline
from tideline.config import Settings
from tideline.profile import ACTIVE_STATUSES, FactDraft


def build(app: Tideline, n: int) -> None:
    turns = [
        app.memory.sync_turn(
            f"s{i % 300}", "user", f"turn {i}", timestamp=f"2025-{1 + i % 12:02d}-01T10:00:00Z"
        ).id
        for i in range(3 * n)
    ]
    cs = app.profile.read().changeset()
    for i in range(n):
        draft = FactDraft("user", f"cat{i % 50}", f"value {i}")
        cs.add_fact(draft, turn_ids=tuple(turns[3 * i : 3 * i + 3]))
    app.profile.apply(cs)


def measure(n: int, reads: int) -> list[str]:
    with tempfile.TemporaryDirectory() as home:
        app = Tideline(Settings.load(overrides={"home": home, "embedder": "none"}))
        try:
            build(app, n)
            listed, read = [], []
            for _ in range(reads):
                t = time.perf_counter()
                with app.db_lock:
                    app.profile.stores.facts.list(ACTIVE_STATUSES)
                listed.append(time.perf_counter() - t)
            stop, waits = threading.Event(), []

            def writer() -> None:
                while not stop.is_set():
                    t = time.perf_counter()
                    app.memory.sync_turn("live", "user", f"said at {t}")
                    waits.append(time.perf_counter() - t)

            thread = threading.Thread(target=writer)
            thread.start()
            for _ in range(reads):
                t = time.perf_counter()
                app.profile.read()
                read.append(time.perf_counter() - t)
            stop.set()
            thread.join()
        finally:
            app.close()
    r50, r95 = ms_stats(read)
    b50, b95 = ms_stats(listed)
    w50, w95 = ms_stats(waits)
    worst = f"{pct([w * 1000 for w in waits], 100):.1f}"
    ratio = f"{sorted(read)[len(read) // 2] / sorted(listed)[len(listed) // 2]:.1f}×"
    return [f"| {n} | {r50} / {r95} | {b50} / {b95} | {ratio} | {w50} / {w95} / {worst} |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000])
    parser.add_argument("--reads", type=int, default=9)
    args = parser.parse_args()
    rows = [row for n in args.sizes for row in measure(n, args.reads)]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    body = "\n".join(
        [
            "## Sleep's read of the profile (bench/profile_read.py)",
            "",
            f"{machine()}; load average {load} (other helpers' jobs running).",
            "",
            "| live facts | read ms (p50 / p95) | plain listing ms (baseline) | read ÷ listing "
            "| writer waits ms (p50 / p95 / max) |",
            "|---:|---:|---:|---:|---:|",
            *rows,
            "",
            "The read counts each fact's sessions and the valid-time span of its evidence in "
            "slices of 100 facts, each under the lock on its own, so a writer waits for one "
            "slice, not for the whole count.",
        ]
    )
    print(body)
    write_section("profile-read", body)


if __name__ == "__main__":
    main()
