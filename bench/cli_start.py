"""`tideline` from process start to exit: what a shell, a hook or an agent's tool call waits for.

Runs the venv's `tideline` console script (the one beside this Python) on a fresh home with no
embedder, so nothing is embedded and what is timed is start-up, the command's imports, opening the
agent database and the command itself. Wall time and the process's CPU time (user + system) per
call, after one uncounted call that writes the bytecode (as an installed package has it; this
machine's shell sets `PYTHONDONTWRITEBYTECODE`, which is unset for the calls).

    .venv/bin/python bench/cli_start.py [--runs 9]

Prints a table; issue 25's figures at 200k turns are in docs/benchmarks-history.md (pg_scale's `cli`).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import machine, ms_stats

COMMANDS = {
    "`tideline --help`": ["--help"],
    "`tideline search cactus --turns --json` (empty memory)": [
        "search",
        "cactus garden",
        "--turns",
        "--json",
    ],
}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call; a failed call stops the benchmark with its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "tideline")
    rows = []
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"TIDELINE_HOME": home, "TIDELINE_EMBEDDER": "none", "NO_COLOR": "1"}
        for label, command in COMMANDS.items():
            timed([exe, *command], env)
            walls, cpus = zip(*(timed([exe, *command], env) for _ in range(args.runs)), strict=True)
            w50, w95 = ms_stats(list(walls))
            c50, c95 = ms_stats(list(cpus))
            rows.append(f"| {label} | {args.runs} | {w50} / {w95} | {c50} / {c95} |")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        "\n".join(
            [
                "## CLI start-up (bench/cli_start.py)",
                "",
                f"Machine: {machine()}; load average {load}.",
                "",
                "| command | runs | wall ms p50 / p95 | CPU ms p50 / p95 |",
                "|---|---:|---:|---:|",
                *rows,
            ]
        )
    )


if __name__ == "__main__":
    main()
