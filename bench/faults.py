"""The fault and attack run (issue 9), by hand: kills, a concurrency soak, symlink escapes,
editor save patterns, fuzzing and long inputs — real processes, real files, real SQLite.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/faults.py --quick
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/faults.py --write

Full mode: 100 SIGKILLs per command with the `none` embedder and 100 more with an embedder (a
loopback server speaking the OpenAI protocol, so that vectors exist and can go missing), a 60 s
soak, symlink escapes, the editor save patterns (and `memo write --append` against a person's
saves for 40 s), nine kinds of database damage and the "N random pages overwritten" family
(112 files), concurrent HTTP bursts (1,200 requests per embedder kind: none, the loopback
OpenAI-protocol server, e5; every write retried after a lost answer), 100k fuzz strings
per core entry point (3k through the CLI's human output, which costs ~50 ms a call) and 100k MCP
tool calls with random arguments, seven
hostile LLM answers against a whole sleep (5 trials each), the damaged search files beside
memory.db (every file kind × 4 kinds of damage × 4 seeds through the CLI, × 2 through a running
server's REST) and 20 logs with a damaged early frame, and the long-input latency with the
bundled e5. `--quick` is a light smoke run of every section (minutes,
no e5). `--only kills,soak` runs some sections. Each section prints rows of test, trials,
failures, figure; `--write` renders docs/reliability.md with the "before" figures beside them.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from _faults_burst import burst
from _faults_calendar import calendar_edges
from _faults_damage import damaged
from _faults_files import (
    append_race,
    editor_patterns,
    memo_dir_symlink,
    meta_symlink,
    same_size_catch_up,
    symlink_race,
)
from _faults_fuzz import fuzz_all
from _faults_llm import hostile_answers
from _faults_mcp import latency, soak
from _faults_mcp_fuzz import fuzz_mcp
from _faults_report import Row, Section, render_saved, save_section, table, write_doc
from _faults_search_files import search_files
from _faults_web import body_caps, namespaces
from _report import machine

from tests.kills import KILLERS, KillTally, cli_env, stub_env
from tests.openai_stub import OpenAIStub


@dataclass(frozen=True)
class Plan:
    """How much of each section a mode runs."""

    kills: int
    vector_kills: int
    soak_seconds: float
    race_searches: int
    edit_repeats: int
    fuzz: int
    fuzz_imports: int
    fuzz_cli: int
    latency_embedder: str
    latency_deadline: float
    latency_repeats: int
    llm_trials: int = 1
    page_seeds: int = 1  # the random-pages damage family: 16 cases × this many seeds
    burst_requests: int = 240  # concurrent HTTP requests per embedder kind
    burst_embedders: tuple[str, ...] = ("none", "openai")
    mcp_fuzz: int = 2_000  # MCP tool calls with random arguments
    race_seconds: float = 5.0  # `memo write --append` against a person's saves
    namespace_rounds: int = 2  # rounds of writes and reads by three tokens, per engine
    body_repeats: int = 1  # 300 MB bodies to each capped route, declared and chunked
    file_seeds: int = 1  # damaged search files: every file kind × 4 kinds × this many seeds
    wal_frames: int = 5  # logs with one damaged early frame
    calendar_sample: int = 100  # time-word searches at the calendar's ends over REST and MCP


QUICK = Plan(10, 4, 10, 200, 1, 5_000, 1_000, 300, "none", 20, 2, 1)
FULL = Plan(
    100,
    100,
    60,
    2_000,
    5,
    100_000,
    100_000,
    3_000,
    "e5",
    120,
    10,
    5,
    page_seeds=7,
    burst_requests=1_200,
    burst_embedders=("none", "openai", "e5"),
    mcp_fuzz=100_000,
    race_seconds=40.0,
    namespace_rounds=10,
    body_repeats=3,
    file_seeds=4,
    wal_frames=20,
    calendar_sample=400,
)


def _kill_row(tally: KillTally, embedder: str) -> Row:
    test = f"SIGKILL during `{tally.command}` ({embedder} embedder)"
    return Row(test, tally.trials, tally.failed_trials, tally.figure())


def kills(base: Path, plan: Plan) -> list[Row]:
    """Every command killed `plan.kills` times without vectors, `plan.vector_kills` with them."""
    rows = []
    for name, killer in KILLERS.items():
        work = base / f"kill-none-{name.replace(' ', '-')}"
        work.mkdir()
        rows.append(_kill_row(killer(work, cli_env(work), plan.kills), "none"))
        print(rows[-1].line(), flush=True)
    with OpenAIStub(dim=32) as stub:
        stub.server.handle_error = lambda *a: None  # type: ignore[method-assign]  # killed clients
        for name, killer in KILLERS.items():
            work = base / f"kill-stub-{name.replace(' ', '-')}"
            work.mkdir()
            tally = killer(work, stub_env(work, stub.url), plan.vector_kills)
            rows.append(_kill_row(tally, "loopback OpenAI-protocol"))
            print(rows[-1].line(), flush=True)
    return rows


def symlinks(base: Path, plan: Plan) -> list[Row]:
    return [symlink_race(base, plan.race_searches), memo_dir_symlink(base), meta_symlink(base)]


SECTIONS: dict[str, Callable[[Path, Plan], list[Row]]] = {
    "kills": kills,
    "soak": lambda base, plan: [soak(base, plan.soak_seconds)],
    "symlinks": symlinks,
    "editors": lambda base, plan: [
        *editor_patterns(base, plan.edit_repeats),
        same_size_catch_up(base, plan.edit_repeats),
        append_race(base, plan.race_seconds),
    ],
    "damage": lambda base, plan: damaged(base, plan.page_seeds),
    "burst": lambda base, plan: [
        burst(base / kind, kind, plan.burst_requests) for kind in plan.burst_embedders
    ],
    "fuzz": lambda base, plan: [
        *fuzz_all(base, plan.fuzz, plan.fuzz_imports, plan.fuzz_cli),
        fuzz_mcp(base, plan.mcp_fuzz),
    ],
    "web": lambda base, plan: [
        *namespaces(base, plan.namespace_rounds),
        body_caps(base / "bodies", plan.body_repeats),
    ],
    "searchfiles": lambda base, plan: search_files(base, plan.file_seeds, plan.wal_frames),
    "calendar": lambda base, plan: calendar_edges(base, plan.calendar_sample),
    "llm": lambda base, plan: hostile_answers(base, plan.llm_trials),
    "latency": lambda base, plan: latency(
        base, plan.latency_embedder, plan.latency_deadline, plan.latency_repeats
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a light run of every section")
    parser.add_argument(
        "--write",
        action="store_true",
        help="rewrite docs/reliability.md (with --only: replace those sections' rows)",
    )
    parser.add_argument("--only", default="", help=f"comma-separated: {', '.join(SECTIONS)}")
    parser.add_argument("--fuzz", type=int, help="fuzz strings per entry point")
    parser.add_argument("--kills", type=int, help="kills per command (none embedder)")
    parser.add_argument(
        "--set",
        default="",
        help="change the plan, e.g. vector_kills=20,mcp_fuzz=50000 (a fraction of a full run)",
    )
    parser.add_argument(
        "--save", type=Path, help="keep each section's rows as JSON in this folder as it ends"
    )
    parser.add_argument(
        "--render",
        type=Path,
        nargs="+",
        help="only rewrite docs/reliability.md from sections kept by --save (no run)",
    )
    parser.add_argument(
        "--embedders",
        help="burst: these embedder kinds only, comma-separated (none, openai, e5; only e5 "
        "embeds here: run it under `flock /work/embed.lock`)",
    )
    args = parser.parse_args()
    if args.render:
        render_saved(args.render, list(SECTIONS))
        return 0
    plan = QUICK if args.quick else FULL
    if args.fuzz or args.kills:
        plan = Plan(
            **{**plan.__dict__, "fuzz": args.fuzz or plan.fuzz, "kills": args.kills or plan.kills}
        )
    if args.embedders:
        plan = replace(plan, burst_embedders=tuple(args.embedders.split(",")))
    for change in filter(None, args.set.split(",")):
        name, value = change.split("=", 1)
        kind = type(getattr(plan, name))
        plan = replace(plan, **{name: kind(value)})
    chosen = [s for s in args.only.split(",") if s] or list(SECTIONS)
    rows: list[Row] = []
    sections: list[Section] = []
    started_on = machine()  # the commit the run began on (a section may end after another)
    with tempfile.TemporaryDirectory(prefix="tideline-faults-") as tmp:
        for name in chosen:
            work = Path(tmp) / name
            work.mkdir()
            print(f"== {name}", flush=True)
            started, load = time.monotonic(), os.getloadavg()[0]
            section = SECTIONS[name](work, plan)
            label = f"{name} ({args.embedders})" if name == "burst" and args.embedders else name
            sections.append(Section(label, time.monotonic() - started, load, os.getloadavg()[0]))
            if args.save:
                save_section(args.save, section, sections[-1], plan.__dict__, started_on)
            if name != "kills":
                for row in section:
                    print(row.line(), flush=True)
            print(sections[-1].line(), flush=True)
            rows += section
    print("\n" + table(rows))
    if args.write:
        mode = "quick" if args.quick else "full"
        write_doc(rows, sections, plan.__dict__, mode, partial=bool(args.only))
    return 1 if any(r.failures for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
