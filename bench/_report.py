"""Shared bits of the benchmarks: timing stats, the machine, and writing their full tables.

Each benchmark owns one section of docs/benchmarks-history.md between `<!-- NAME:start -->` and
`<!-- NAME:end -->` and rewrites only that section; the current figure of each metric is a row of
docs/benchmarks.md's table, edited by hand (its "How to add a row").
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
from pathlib import Path

DOC = Path(__file__).parents[1] / "docs" / "benchmarks-history.md"
#: ../shared/data beside the checkout; `TIDELINE_SHARED_DATA` names it for a checkout elsewhere
#: (a worktree under /work/wt).
SHARED = Path(
    os.environ.get("TIDELINE_SHARED_DATA")
    or Path(__file__).resolve().parents[2] / "shared" / "data"
)


def machine() -> str:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor()
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; Python {platform.python_version()}; "
        f"commit {commit or '?'}"
    )


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    idx = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[idx]


def ms_stats(seconds: list[float]) -> tuple[str, str]:
    """(median, p95) in milliseconds, formatted."""
    ms = [s * 1000 for s in seconds]
    return f"{statistics.median(ms):.2f}", f"{pct(ms, 95):.2f}"


def write_section(name: str, body: str) -> None:
    """Replace (or append) the named section of docs/benchmarks-history.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = DOC.read_text() if DOC.exists() else "# Benchmarks: the history\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(text)


def sizes_and_write(argv: list[str], what: str) -> tuple[list[int], bool]:
    """The corpus sizes to run (default 1k, 10k, 50k) and whether to `--write` the section."""
    parser = argparse.ArgumentParser(description=what)
    parser.add_argument(
        "sizes", nargs="*", type=int, help="corpus sizes (default 1000 10000 50000)"
    )
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks-history.md")
    args = parser.parse_args(argv)
    return args.sizes or [1_000, 10_000, 50_000], args.write
