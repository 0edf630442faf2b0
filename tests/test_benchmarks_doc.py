"""docs/benchmarks.md's current table stays reproducible: every row names a command, and every
command it names still runs with `--help` and still has each option the row gives it."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
BIN = Path(sys.executable).parent


def current_rows() -> list[list[str]]:
    """The cells of each data row of the *Current figures* table (group rows left out)."""
    table = DOC.read_text(encoding="utf-8").split("## Current figures", 1)[1]
    rows = []
    for line in table.splitlines():
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0].startswith("metric") or not any(cells[1:]):
            continue
        rows.append(cells)
    return rows


def commands() -> list[str]:
    """The command of every row; "same" is the row above's."""
    found: list[str] = []
    for cells in current_rows():
        assert len(cells) == 7, f"a current row has {len(cells)} cells, not 7: {cells[0]}"
        named = re.findall(r"`([^`]+)`", cells[4])
        if cells[4] == "same" and found:
            continue
        assert named, f"the row {cells[0]!r} names no command in backticks"
        found.extend(named)
    return found


def segments(command: str) -> list[tuple[tuple[str, ...], list[str]]] | str:
    """(the program to ask for its help, the options the row gives it) for each program the
    command runs: a bench script, and another one it runs (`ab_trees.py … -- bench/x.py …`);
    or what is wrong with the command."""
    words = shlex.split(command)
    if words[0] == "make":
        makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
        return [] if re.search(rf"^{re.escape(words[1])}:", makefile, re.M) else "no such target"
    if words[0] == "tideline":
        path = [w for w in words[1:2] if re.fullmatch(r"[a-z][a-z-]*", w)]
        return [((str(BIN / "tideline"), *path), [w for w in words if w.startswith("--")])]
    found: list[tuple[tuple[str, ...], list[str]]] = []
    for word in words:
        if re.fullmatch(r"bench/\w+\.py", word):
            if not (ROOT / word).is_file():
                return f"{word} does not exist"
            found.append(((sys.executable, str(ROOT / word)), []))
        elif word.startswith("--") and word != "--" and found:
            found[-1][1].append(word.split("=", 1)[0])
    return found or "not a bench script, tideline or make"


def problems(listed: list[str]) -> list[str]:
    """What is wrong with each command: a missing script or target, a failing `--help`, an
    option the program's help does not list."""
    wrong: list[str] = []
    wanted: dict[tuple[str, ...], set[str]] = {}
    for command in listed:
        parts = segments(command)
        if isinstance(parts, str):
            wrong.append(f"{command}: {parts}")
            continue
        for program, options in parts:
            wanted.setdefault(program, set()).update(options)
    # every program at once: each is an interpreter's start-up (0.1-1.3 s here), not work
    running = {
        program: subprocess.Popen(
            [*program, "--help"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for program in wanted
    }
    for program, proc in running.items():
        out, err = proc.communicate(timeout=120)
        name = " ".join(Path(p).name for p in program[1:] or program)
        if proc.returncode != 0:
            wrong.append(f"{name} --help failed: {err[-300:]}")
        wrong += [f"{name} has no {o}" for o in sorted(wanted[program]) if o not in out]
    return wrong


def test_the_current_table_has_the_columns_and_a_row_per_metric() -> None:
    text = DOC.read_text(encoding="utf-8").split("## Current figures", 1)[1]
    columns = (
        "| metric (target) | figure | baseline (same run) | ratio | command | date (UTC) | load |"
    )
    assert columns in text
    metrics = [cells[0] for cells in current_rows()]
    assert len(metrics) >= 20 and len(set(metrics)) == len(metrics)


def test_every_current_command_runs_with_help_and_knows_its_options() -> None:
    assert problems(commands()) == []


def test_a_missing_script_target_or_option_is_named() -> None:
    found = problems(
        [
            "bench/cli_start.py --runs 5 --no-such-option",
            "bench/no_such_bench.py",
            "make no-such-target",
            "bench/ab_trees.py --rounds 2 -- bench/cli_start.py --rounds 2",
        ]
    )
    assert found == [
        "bench/no_such_bench.py: bench/no_such_bench.py does not exist",
        "make no-such-target: no such target",
        "cli_start.py has no --no-such-option",
        "cli_start.py has no --rounds",
    ]


def test_bench_scripts_find_the_shared_data_through_one_place() -> None:
    """A worktree outside /work/main (TIDELINE_SHARED_DATA) runs every script: only
    bench/_report.py builds the path of ../shared/data, the scripts read its `SHARED`
    (ab_trees.py only passes a default to the runs it starts)."""
    own = [
        path.name
        for path in sorted((ROOT / "bench").glob("*.py"))
        if path.name not in ("_report.py", "ab_trees.py")
        and re.search(r"""["']shared["']\s*/\s*["']data["']""", path.read_text(encoding="utf-8"))
    ]
    assert own == [], f"these build ../shared/data themselves instead of _report.SHARED: {own}"
