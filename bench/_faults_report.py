"""Rows of the fault run and docs/reliability.md, in the style of docs/benchmarks.md."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from _report import machine

DOC = Path(__file__).parents[1] / "docs" / "reliability.md"


@dataclass(frozen=True)
class Row:
    """One line of the table: what was tried, how often, how often it went wrong, the figure."""

    test: str
    trials: int
    failures: int
    figure: str

    def line(self) -> str:
        mark = "ok  " if self.failures == 0 else "FAIL"
        return f"{mark} {self.test}: {self.trials} trials, {self.failures} failures — {self.figure}"


def table(rows: list[Row]) -> str:
    lines = ["| test | trials | failures | figure |", "|---|---:|---:|---|"]
    lines += [f"| {r.test} | {r.trials:,} | {r.failures:,} | {r.figure} |" for r in rows]
    return "\n".join(lines)


def command_line() -> str:
    return "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python " + shlex.join(sys.argv)


def write_doc(rows: list[Row], mode: str) -> None:
    """Rewrite docs/reliability.md with the table, the machine and the command line."""
    DOC.write_text(
        "# Reliability\n\n"
        "Faults and attacks tried against real processes, files and SQLite databases by "
        "`bench/faults.py` (the fast versions are `tests/test_faults.py` and the fuzz and symlink "
        "tests). A failure is a corrupt database, a lost or duplicated acknowledged write, a "
        "vector still missing after a re-run, a file outside the library read or written, a lost "
        "edit, an uncaught non-Tideline exception, or a request over the latency bound.\n\n"
        f"Machine: {machine()}. Mode: {mode}.\n"
        f"Command: `{command_line()}`.\n\n"
        f"{table(rows)}\n"
    )
