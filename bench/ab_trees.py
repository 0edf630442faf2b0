"""One benchmark, two checkouts, interleaved in one run window: before/after numbers with their noise.

A benchmark run once on each tree at different times says more about the machine's load than about
the code (these 2 cores are shared). This runs the same benchmark alternately on a baseline tree A
and a tree B (A B B A A B …: a load that rises or falls through the window hits both alike), each
with its own `.venv`, records the load average before every run, reads every number out of the
markdown tables (and `p50 … ms` lines) the benchmark prints, and reports per cell the median of
A's runs, of B's, the ratio B/A and the noise band: the widest max/min spread between runs of one
tree. A ratio outside the band is flagged; a band from one run per tree is unknown (`?`).

    bench/ab_trees.py --a /work/wt/base --rounds 2 -- bench/analysis_pure.py 1000 10000
    bench/ab_trees.py --a /work/wt/base --script-from b -- bench/profile_read.py --sizes 300
    bench/ab_trees.py --report /work/cache/runs/ab-pure.jsonl   # the summary of a saved run

Each tree runs its own copy of the script unless `--script-from b` (a script the baseline does not
have, run against the baseline's package). `--cpu-clock` makes the benchmark's own timers read CPU
time: in the child, `time.perf_counter` is `time.process_time` (a `sitecustomize` on its path), so
what other processes on the machine take does not count, only the work of the benchmark's own
threads. For single-threaded timings on a loaded machine; not for anything that waits (a lock, a
server, a sleep), whose waiting would read as zero. A script that rewrites docs/benchmarks.md or benchmarks-history.md
has those files put back after each run, so only the summary is the result. Runs append to `--out` (JSON lines).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?$")
P_LINE = re.compile(r"\b(p50|p95)\s+([\d,]+(?:\.\d+)?)\s*ms")
MS_LINE = re.compile(r"^(?P<label>[^:|]{3,80}):\s*(?P<value>[\d,]+(?:\.\d+)?)\s*ms\b")


def number(cell: str) -> float | None:
    """A table cell's value (`1,234.5`, `**43.2**`, `5.1×`, `87 %`), or None for text."""
    text = cell.strip().strip("*").strip().rstrip("×%s").strip()
    return float(text.replace(",", "")) if NUMBER.match(text) else None


def is_value(cell: str) -> bool:
    """A number, or numbers joined by ` / ` (`54.6 / 85.1`: a p50 and a p95)."""
    return any(number(part) is not None for part in cell.split(" / "))


def cells_of(output: str) -> dict[str, float | str]:
    """Every number a benchmark printed, keyed by its heading, row label and column.

    A row's label is its cells up to the first number (`10,000 | head words | lex`); a text cell
    after it (what a dream layer wrote) is kept as text, so a changed result shows too.
    """
    found: dict[str, float | str] = {}
    heading = ""
    header: list[str] = []
    for line in output.splitlines():
        if line.startswith("#"):
            heading, header = line.lstrip("#").strip(), []
            continue
        if not line.startswith("|"):
            header = []
            for name, value in P_LINE.findall(line):
                label = line.split(":", 1)[0].strip() if ":" in line else line[:40]
                found[f"{heading} | {label} | {name}"] = float(value.replace(",", ""))
            match = MS_LINE.match(line.strip())
            if match and not P_LINE.search(line):
                found[f"{heading} | {match['label'].strip()}"] = float(
                    match["value"].replace(",", "")
                )
            continue
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = row
            continue
        if all(set(c) <= set("-: ") for c in row):
            continue
        first_number = next((i for i, c in enumerate(row) if i and is_value(c)), len(row))
        label = " / ".join(row[:first_number])
        for column, cell in zip(header[first_number:], row[first_number:], strict=False):
            parts = [number(p) for p in cell.split(" / ")]
            if all(value is None for value in parts):
                found[f"{heading} | {label} | {column}"] = cell
                continue
            for i, value in enumerate(parts):
                if value is None:
                    continue
                suffix = f" #{i + 1}" if len(parts) > 1 else ""
                found[f"{heading} | {label} | {column}{suffix}"] = value
    return found


DOC_NAMES = ("benchmarks.md", "benchmarks-history.md")

CPU_CLOCK = "import time\n\ntime.perf_counter = time.process_time  # ab_trees --cpu-clock\n"


def run_once(
    tree: Path, script: Path, args: list[str], timeout: float, cpu_clock: Path | None = None
) -> dict[str, object]:
    """One run of the benchmark on one tree: its numbers, its wall time, the load around it."""
    # what a script run with --write may rewrite, put back after the run
    paths = [root / "docs" / name for root in (tree, HERE) for name in DOC_NAMES]
    docs = {path: path.read_bytes() if path.exists() else None for path in paths}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.setdefault("TIDELINE_SHARED_DATA", str(HERE.parents[1] / "shared" / "data"))
    if cpu_clock:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cpu_clock), env.get("PYTHONPATH")]))
    load_before, cpu = os.getloadavg()[0], resource.getrusage(resource.RUSAGE_CHILDREN)
    started, wall = time.strftime("%H:%M:%S", time.gmtime()), time.perf_counter()
    done = subprocess.run(
        [str(tree / ".venv" / "bin" / "python"), str(script), *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    wall = time.perf_counter() - wall
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = used.ru_utime - cpu.ru_utime + used.ru_stime - cpu.ru_stime
    for path, content in docs.items():
        if content is not None and path.read_bytes() != content:
            path.write_bytes(content)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
    return {
        "tree": str(tree),
        "started": started,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "wall_s": round(wall, 2),
        "rc": done.returncode,
        "cpu_s": round(cpu_s, 2),
        "cells": {**cells_of(done.stdout), "whole run | CPU s (user + system)": round(cpu_s, 2)},
        "stdout": done.stdout,
    }


def summary(runs: list[dict[str, object]], a: str, b: str) -> str:
    """The A/B table: medians, ratio, noise band, verdict; then each run's time and load."""
    by_tree: dict[str, list[dict[str, float | str]]] = {a: [], b: []}
    for run in runs:
        by_tree.setdefault(str(run["tree"]), []).append(run["cells"])  # type: ignore[arg-type]
    keys = [k for k in by_tree[b][0] if all(k in r for r in by_tree[a] + by_tree[b])]
    lines = [
        "| cell | A median | B median | B/A | noise band | verdict |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for key in keys:
        va, vb = [r[key] for r in by_tree[a]], [r[key] for r in by_tree[b]]
        if any(isinstance(v, str) for v in va + vb):
            same = len({str(v) for v in va + vb}) == 1
            verdict = "same" if same else "differs: " + " vs ".join(sorted({str(v) for v in vb}))
            lines.append(f"| {key} | {va[0]} | {vb[0]} | | | {verdict} |")
            continue
        fa, fb = [float(v) for v in va], [float(v) for v in vb]
        ma, mb = statistics.median(fa), statistics.median(fb)
        spreads = [max(v) / min(v) for v in (fa, fb) if len(v) > 1 and min(v) > 0]
        band = max(spreads) if spreads else None
        ratio = mb / ma if ma else float("nan")
        if ma == mb:
            verdict = "same"
        elif not ma or not mb:
            verdict = "below the printed resolution"
        elif band is None:
            verdict = "? (one run a tree)"
        elif 1 / band <= ratio <= band:
            verdict = "noise"
        else:
            verdict = ("slower" if ratio > 1 else "faster") + " beyond noise"
        shown = f"×{band:.2f}" if band else "?"
        lines.append(f"| {key} | {ma:g} | {mb:g} | {ratio:.2f} | {shown} | {verdict} |")
    lines += [
        "",
        "| tree | started (UTC) | load before → after | wall s | CPU s | exit |",
        "|---|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {'A' if r['tree'] == a else 'B'} | {r['started']} | {r['load_before']:.2f} → "
        f"{r['load_after']:.2f} | {r['wall_s']} | {r.get('cpu_s', '')} | {r['rc']} |"
        for r in runs
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", type=Path, help="the baseline tree (its own .venv)")
    ap.add_argument("--b", type=Path, default=HERE, help="the tree measured against it")
    ap.add_argument("--rounds", type=int, default=2, help="runs per tree")
    ap.add_argument("--script-from", choices=("own", "b"), default="own")
    ap.add_argument("--cpu-clock", action="store_true", help="the script's timers read CPU time")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--out", type=Path, help="append every run here (JSON lines)")
    ap.add_argument("--report", type=Path, help="only summarise the runs saved in this file")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- bench/x.py [its arguments]")
    args = ap.parse_args()
    if args.report:
        runs = [json.loads(line) for line in args.report.read_text().splitlines() if line]
        for run in runs:  # read again: the reading may have learnt since the runs were saved
            whole = {k: v for k, v in run["cells"].items() if k.startswith("whole run")}
            run["cells"] = {**cells_of(run["stdout"]), **whole}
        trees = list(dict.fromkeys(str(r["tree"]) for r in runs))
        print(summary(runs, trees[0], trees[1]))
        return
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not args.a or not command:
        ap.error("give --a TREE and -- SCRIPT [ARGS]")
    a, b = args.a.resolve(), args.b.resolve()
    clock = None
    if args.cpu_clock:
        clock = Path(tempfile.mkdtemp(prefix="ab-cpu-clock-"))
        (clock / "sitecustomize.py").write_text(CPU_CLOCK)
    runs = []
    for i in range(args.rounds):
        for tree in (a, b) if i % 2 == 0 else (b, a):
            script = (b if args.script_from == "b" else tree) / command[0]
            run = run_once(tree, script, command[1:], args.timeout, clock)
            print(
                f"[{run['started']}] {'A' if tree == a else 'B'} load {run['load_before']:.2f} "
                f"wall {run['wall_s']} s exit {run['rc']}",
                flush=True,
            )
            runs.append(run)
            if args.out:
                with args.out.open("a") as out:
                    out.write(json.dumps({**run, "command": command, "cpu_clock": bool(clock)}))
                    out.write("\n")
    print(summary(runs, str(a), str(b)))


if __name__ == "__main__":
    main()
