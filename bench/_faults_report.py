"""Rows of the fault run and docs/reliability.md, in the style of docs/benchmarks.md.

The run rewrites only the block between `<!-- faults:start -->` and `<!-- faults:end -->`; the
notes written by hand below it stay.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _report import machine

DOC = Path(__file__).parents[1] / "docs" / "reliability.md"
START, END = "<!-- faults:start -->", "<!-- faults:end -->"

#: What the same tests found before the issue 9 fixes merged: "quick" is this harness's
#: `--quick` run on the tree of the faults-suite branch (commit 047a406, before any fix), "issue"
#: the full-scale run quoted in issue 9. Rows without a figure were not measured then.
BEFORE: dict[str, str] = {
    "SIGKILL during `memo index` (none embedder)": "issue: 38 kills; 0 corrupt, 0 lost, 0 dup.",
    "SIGKILL during `tideline import` (none embedder)": (
        "issue: 44 kills; 0 corrupt, 0 lost, 0 dup."
    ),
    "SIGKILL during `tideline write` (none embedder)": (
        "issue: 46 kills; 0 corrupt, 0 lost, 0 dup."
    ),
    "SIGKILL during `tideline import` (loopback OpenAI-protocol embedder)": (
        "quick: **1 of 4 failed, 272 vectors missing after a re-run**; issue: 35 of 35 turns "
        "without vectors after one kill, re-runs embedded nothing"
    ),
    "concurrency soak (MCP + CLI writes + watcher)": (
        "issue: 60 s, 0 “database is locked”, 0 lost of 2,409 acknowledged writes"
    ),
    "symlink swap race (note ↔ link out)": (
        "quick: **3 of 200 searches showed the outside file**; issue: 3 of 40 CLI searches"
    ),
    "`.memo` symlinked to an outside folder": (
        "quick: **1 of 1**: the index written into the link's target, a foreign "
        "index.db / state.json deleted as “broken”"
    ),
    "`_meta.yaml` symlinked outside": (
        "quick: **3 of 4** showed the outside description (status, route, _registry.yaml)"
    ),
    "editor save: same size, same mtime (os.utime restore)": (
        "quick: **1 of 1 lost**; issue: 4 of 4 lost (`cp -p`, `rsync -t`, `touch -r`)"
    ),
    "same size, same mtime, no watcher: next search": (
        "issue: **4 of 4 lost**, `memo status` said behind 0"
    ),
    "damaged memory.db (9 kinds): `tideline doctor` names it": (
        "issue: **0 of 8**: “all good” (doctor never opened memory.db)"
    ),
    "damaged memory.db: search, stats, write refuse in one line, file untouched": (
        "issue: raw `apsw.CorruptError` tracebacks; a 0-byte memory.db silently used as a new, "
        "empty memory"
    ),
    "damaged memory.db: `tideline doctor --repair`": (
        "#21: a damaged first page: “not one row could be read”, a hidden .memory.db.repaired "
        "and empty -wal / -shm left behind; issue 9's first full run (f1c3089): 6 of 8 "
        "recovered; issue 9: no `--repair`"
    ),
    "memory.db with N random pages overwritten: `tideline doctor` calls it damaged": (
        "main before this branch (cdef28a), `--quick`'s 16 files: **5 of 16** called healthy; "
        "#21: **3 of 7** files with 10 random pages: “all good”, exit 0"
    ),
    "memory.db with N random pages overwritten: the first command refuses it": (
        "main before this branch (cdef28a), `--quick`'s 16 files: **5 of 16** used by `stats`; "
        "#21: search, stats and one `write` ran on them"
    ),
    "concurrent HTTP bursts (writes, notes, searches; lost answers retried), loopback "
    "OpenAI-protocol embedder": (
        "#21: **12 of 180** requests in 60-way bursts answered 500 (`ThreadingViolationError`); "
        "120 stored, 117 acknowledged: **3 duplicated** by a retry"
    ),
    "`memo write --append` while a person's editor saves the note": (
        "#21: **1 of 216** hand edits lost in 40 s"
    ),
    "fuzz: MCP tool arguments (every tool; ids past 2^63, idempotency keys, wrong types)": (
        "#21: **194 of 12,000** “unexpected OverflowError” (fact_reject / fact_close / "
        "fact_timeline); this branch before its surrogate fixes: **47 of 6,000** "
        "(UnicodeEncodeError in memory_profile, memory_forget, memo_route)"
    ),
    "namespaces: three tokens on one server, REST + MCP + panel, memory + library (sqlite)": (
        "#21: with `TIDELINE_TOKENS_FILE`, **token B read the note token A wrote**, and wrote "
        "notes A then saw (one library for every namespace)"
    ),
    "namespaces: three tokens on one server, REST + MCP + panel, memory + library "
    "(postgresql)": "#21: the same on PostgreSQL (`Settings.for_namespace` kept `memo_root`)",
    "request bodies of 300 MB to every capped route (declared and chunked)": (
        "#21: a 300 MB `POST /api/narratives` **read and parsed for 20 s, the server 205 → "
        "750 MB**, before the 500-character limit refused it"
    ),
    "damaged library index.db (8 kinds): the next `memo search`": (
        "issue: 7 of 8 rebuilt; index.db replaced by a folder failed every memo command"
    ),
    "fuzz: memory search": "quick: **325 of 5,000**; issue: 7,372 of 100k per path",
    "fuzz: library search": "quick: **602 of 5,000**; issue: 7,372 of 100k per path",
    "fuzz: import of malformed files": (
        "quick: **163 of 1,000**; issue: 136 of 511 malformed files"
    ),
    "fuzz: CLI human output (memo search, tideline write + search)": (
        "main before this branch (e3bc954): **6 of 300** (rich `MarkupError`); this branch "
        "before its joiner fix (2f31fe3): **3 of 3,000** (`IndexError` inside rich)"
    ),
    "long input: memory_search, 20,000-char query": (
        "first full run (f1c3089, a 512-token query window): **alone median 1.84 s, p95 2.12 s**; "
        "quick: **23.2 s; another client's memory_stats waited 23.2 s**; issue: 11–37 s"
    ),
    "long input: memo_search, 20,000-char query": (
        "first full run (f1c3089, a 512-token query window): **alone median 1.52 s, p95 1.74 s**; "
        "issue: **11–37 s** for a 20k query (e5)"
    ),
    "long input: memo_search, 1 MB query, no spaces": (
        "issue: **49 s** (`memo search --mode lex`, 1 MB)"
    ),
    "long input: `memo search --mode lex`, 131,000 chars, no spaces": (
        "quick: **1.22 s** (bound 1 s, start-up included)"
    ),
    "damaged search files: `tideline search` (CLI, a new process)": (
        "#31: 30 % random bytes in graph.usearch: exit −11 (seeds 5, 7, 9 of 10), again after "
        "every restart; damaged vectors, ids or .fieldnorm: 10–12 of 18 answers wrong; damaged "
        ".idx/.pos/.store/.fast: PanicException or ValueError escaped; doctor: all good"
    ),
    "damaged search files: `tideline serve` REST (files open)": (
        "#31: the server died on its first vector search over a damaged graph, and after a restart"
    ),
    "damaged write-ahead log frame (60 acknowledged turns after it)": (
        "#31: 6–7 of 60 acknowledged turns gone; stats, search and doctor exit 0"
    ),
    "time words at the calendar's ends: core `Memory.search`": (
        "#31: OverflowError / year 10000 out of range (30 of 138 combinations)"
    ),
    "time words at the calendar's ends: REST `/api/search`": "#31: 500",
    "time words at the calendar's ends: MCP `memory_search`": '#31: "unexpected …" tool error',
    "time words at the calendar's ends: CLI `tideline search`": "#31: a traceback",
}


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

    @property
    def cell(self) -> str:
        """The figure as one table cell: no line breaks, no column separators."""
        return " / ".join(self.figure.splitlines()).replace("|", "\\|")


@dataclass(frozen=True)
class Section:
    """How long one section ran and the machine's 1-minute load average around it."""

    name: str
    seconds: float
    load_start: float
    load_end: float

    def line(self) -> str:
        return (
            f"-- {self.name}: {self.seconds:.0f} s, load average {self.load_start:.2f} → "
            f"{self.load_end:.2f}"
        )


def table(rows: list[Row], before: bool = False) -> str:
    if not before:
        lines = ["| test | trials | failures | figure |", "|---|---:|---:|---|"]
        lines += [f"| {r.test} | {r.trials:,} | {r.failures:,} | {r.cell} |" for r in rows]
        return "\n".join(lines)
    lines = [
        "| test | trials | failures | after the fixes | before the fixes |",
        "|---|---:|---:|---|---|",
    ]
    lines += [
        f"| {r.test} | {r.trials:,} | {r.failures:,} | {r.cell} | {BEFORE.get(r.test, '—')} |"
        for r in rows
    ]
    return "\n".join(lines)


def command_line() -> str:
    return "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python " + shlex.join(sys.argv)


def _sections(sections: list[Section]) -> str:
    lines = ["| section | minutes | load average at start → end |", "|---|---:|---|"]
    lines += [
        f"| {s.name} | {s.seconds / 60:.1f} | {s.load_start:.2f} → {s.load_end:.2f} |"
        for s in sections
    ]
    return "\n".join(lines)


def _block(header: list[str], rows: list[Row], sections: list[Section]) -> str:
    failed = sum(1 for r in rows if r.failures)
    return "\n".join(
        [
            START,
            *header,
            f"Rows: {len(rows)}, {failed} with failures; {sum(s.seconds for s in sections) / 60:.0f} "
            "minutes in all. The machine was shared with other engineers' test runs: the load "
            "average (2 cores) is given per section below, and timings are medians / p95 / max.",
            "",
            table(rows, before=True),
            "",
            _sections(sections),
            END,
        ]
    )


def _cells(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in line.strip().strip("|").split(" | ")]


def _parse(block: str) -> tuple[list[str], list[Row], list[Section]]:
    """The header lines, rows and sections of a block this module wrote."""
    header, rows, sections = [], [], []
    for line in block.splitlines():
        if line.startswith(("Machine:", "Command:", "Re-run")):
            header.append(line)
        elif line.startswith("| ") and not line.startswith(("| test |", "| section |")):
            cells = _cells(line)
            if len(cells) == 5:
                test, trials, failures, figure, _ = cells
                rows.append(Row(test, int(trials.replace(",", "")), int(failures), figure))
            elif len(cells) == 3:
                name, minutes, load = cells
                start, end = (float(x) for x in load.split(" → "))
                sections.append(Section(name, float(minutes) * 60, start, end))
    return header, rows, sections


def write_doc(
    rows: list[Row],
    sections: list[Section],
    plan: dict[str, Any],
    mode: str,
    *,
    partial: bool = False,
) -> None:
    """Rewrite the generated block of docs/reliability.md: table, machine, load, command.

    With `partial` (a run of some sections only), the rows and sections it measured replace
    those of the same name in the block, the others stay, and a line says what was re-run."""
    counts = ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in plan.items())
    text = DOC.read_text() if DOC.exists() else _skeleton()
    old = text.split(START, 1)[1].split(END, 1)[0] if START in text and END in text else ""
    header = [f"Machine: {machine()}.", f"Command: `{command_line()}` (mode {mode}: {counts})."]
    if partial and old:
        header, old_rows, old_sections = _parse(old)
        names = ", ".join(s.name for s in sections)
        header.append(
            f"Re-run of {names} on {machine().rsplit('; ', 1)[-1]}: `{command_line()}`; "
            "its rows replace the first run's."
        )
        fresh = {r.test: r for r in rows}
        rows = [fresh.pop(r.test, r) for r in old_rows] + list(fresh.values())
        rerun = {s.name: s for s in sections}
        sections = [rerun.pop(s.name, s) for s in old_sections] + list(rerun.values())
    block = _block(header, rows, sections)
    if old:
        head, rest = text.split(START, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOC.write_text(text)


def _skeleton() -> str:
    return (
        "# Reliability\n\n"
        "Faults and attacks tried against real processes, files and SQLite databases by "
        "`bench/faults.py` (the fast versions are `tests/test_faults.py` and the fuzz and symlink "
        "tests). A failure is a corrupt database, a lost or duplicated acknowledged write, a "
        "vector still missing after a re-run, a file outside the library read or written, a lost "
        "edit, an uncaught non-Tideline exception, or a request over the latency bound.\n"
    )


def save_section(
    folder: Path, rows: list[Row], section: Section, plan: dict[str, Any], started_on: str
) -> None:
    """Keep one section's rows as JSON in `folder` (`--save`), as soon as the section ends, so a
    long run interrupted later loses nothing and runs made apart (an e5 part under the embedding
    lock, a fraction re-run) can be rendered into one table (`--render`)."""
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "machine": started_on,
        "command": command_line(),
        "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "plan": plan,
        "section": asdict(section),
        "rows": [asdict(r) for r in rows],
    }
    (folder / f"{section.name.replace(' ', '')}.json").write_text(
        json.dumps(record, indent=1) + "\n"
    )


def render_saved(folders: list[Path], order: list[str]) -> None:
    """Rewrite the block of docs/reliability.md from sections saved by `--save` (the last one
    saved under a name wins), with the command, commit and time of each."""
    saved: dict[str, dict[str, Any]] = {}
    for folder in folders:
        for path in sorted(folder.glob("*.json")):
            record = json.loads(path.read_text())
            saved[record["section"]["name"]] = record
    names = sorted(saved, key=lambda n: (order.index(n.split()[0]), saved[n]["finished"]))
    records = [saved[n] for n in names]
    cpu = records[0]["machine"].rsplit("; ", 1)[0]
    header = [f"Machine: {cpu}."]
    by_command: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_command.setdefault(record["command"], []).append(record)
    for command, group in by_command.items():
        commits = sorted({r["machine"].rsplit("commit ", 1)[-1] for r in group})
        sections = ", ".join(r["section"]["name"] for r in group)
        plan = ", ".join(
            f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in group[0]["plan"].items()
        )
        header.append(
            f"Command: `{command}` — sections {sections}; begun on commit {', '.join(commits)}; finished "
            f"{group[-1]['finished']} (plan: {plan})."
        )
    rows = [Row(**row) for record in records for row in record["rows"]]
    sections = [Section(**record["section"]) for record in records]
    text = DOC.read_text() if DOC.exists() else _skeleton()
    head, rest = text.split(START, 1) if START in text else (text.rstrip() + "\n\n", END)
    DOC.write_text(head + _block(header, rows, sections) + rest.split(END, 1)[1])
