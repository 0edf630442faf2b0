"""`tideline` from process start to exit: what a shell, a hook or an agent's tool call waits for.

Runs the venv's `tideline` console script (the one beside this Python) on a fresh home with no
embedder, so nothing is embedded and what is timed is start-up, the command's imports, opening the
agent database and the command itself. Wall time and the process's CPU time (user + system) per
call, after one uncounted call that writes the bytecode (as an installed package has it; this
machine's shell sets `PYTHONDONTWRITEBYTECODE`, which is unset for the calls).

    .venv/bin/python bench/cli_start.py [--runs 9]

With `--home DIR` it times instead a real search on that home with the home's embedder (the
query embedded uncached, the model loaded: what an agent's shell call waits for), e.g. a LoCoMo
home built once with `TIDELINE_HOME=DIR tideline import conv-30.json --format locomo`; run it
under `flock /work/embed.lock`, as it embeds.

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
#: `--home`: a question about the home's conversation, each run a different one (and each
#: invocation's its own: the home's cache keeps the questions of the last), so the query
#: embedding cache never answers (the question itself does not matter to start-up).
HOME_QUERY = "what did they say about the trip, {n}?"


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


def row(label: str, runs: list[tuple[float, float]]) -> str:
    """The table row of these (wall, CPU) runs."""
    walls, cpus = zip(*runs, strict=True)
    w50, w95 = ms_stats(list(walls))
    c50, c95 = ms_stats(list(cpus))
    return f"| {label} | {len(runs)} | {w50} / {w95} | {c50} / {c95} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument(
        "--home",
        type=Path,
        help='time `tideline search "<question>" --json` on this home, its embedder loaded',
    )
    args = ap.parse_args()
    exe = str(Path(sys.executable).parent / "tideline")
    rows = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    if args.home:
        env["TIDELINE_HOME"] = str(args.home)
        stamp = time.strftime("%H%M%S")
        search = [exe, "search", HOME_QUERY.format(n=f"{stamp}-first"), "--json"]
        timed(search, env)
        runs = [
            timed([exe, "search", HOME_QUERY.format(n=f"{stamp}-{n}"), "--json"], env)
            for n in range(args.runs)
        ]
        rows.append(row(f'`tideline search "<question>" --json` on {args.home}', runs))
    else:
        with tempfile.TemporaryDirectory() as home:
            env |= {"TIDELINE_HOME": home, "TIDELINE_EMBEDDER": "none"}
            for label, command in COMMANDS.items():
                timed([exe, *command], env)
                rows.append(row(label, [timed([exe, *command], env) for _ in range(args.runs)]))
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
