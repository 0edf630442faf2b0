"""The script layer on a real agent database: `scripts all` step by step over 1k, 10k, 50k narratives.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/analysis_scripts.py [--write] [N ...]

Narratives come from `analysis_pure.make_corpus` (LoCoMo observations mixed with Chinese and
Russian text, Zipf-like tags, entity roles) and are inserted with SQL; their 384-d vectors (60
planted centres plus noise) go straight into `narrative_text_vec` after `TextIndex.bind_vectors`,
so only the scripts are timed, never the embedder. N/5 turns newer than the last narrative give the
scanner work. Each size runs `run_all` twice on a fresh database: the first run builds everything,
the second finds nothing to change (it must change nothing). `--write` puts the table into
docs/benchmarks-history.md (section "analysis-scripts").
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from _report import machine, sizes_and_write, write_section
from analysis_pure import make_corpus

from tideline.analysis import ANALYSIS_MIGRATIONS
from tideline.analysis.scripts import STEPS, run_all
from tideline.app import memory_policies
from tideline.clock import system_clock
from tideline.config import DEFAULTS
from tideline.memory import AGENT_MIGRATIONS, NARRATIVE_INDEX, Memory, compute_weight
from tideline.search import TextIndex
from tideline.store import open_database


def build(path: Path, n: int) -> None:
    c = make_corpus(n)
    db = open_database(path, AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS)
    stamp = lambda i: (c["narratives"][i].created_at).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    with db.transaction():
        rows = []
        for (i, text), w, (_, roles) in zip(c["texts"], c["narratives"], c["roles"], strict=True):
            gesture, _, context = text.partition(" ")
            rows.append(
                (
                    i + 1,
                    gesture[:500] or text[:500],
                    context,
                    w.importance,
                    w.emotional,
                    3,
                    w.unresolved,
                    compute_weight(w.importance, w.emotional, 3, w.unresolved),
                    json.dumps(sorted(set(c["tags"][i]))),
                    roles,
                    stamp(i),
                    stamp(i),
                )
            )
        db.executemany(
            "INSERT INTO narratives(id, gesture, context, importance, emotional, recurrence,"
            " unresolved, weight, kind, tags, entities_role, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'narrative', ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO narrative_tags(narrative_id, tag) VALUES (?, ?)",
            [(i + 1, t) for i, tags in c["tags"].items() for t in sorted(set(tags))],
        )
        db.execute(
            "INSERT INTO sessions(id, key, created_at) VALUES (1, 'bench', '2025-01-01T00:00:00Z')"
        )
        last = c["narratives"][-1].created_at
        db.executemany(
            "INSERT INTO turns(session_id, seq, role, text, ts, hash, created_at)"
            " VALUES (1, ?, 'user', ?, ?, ?, ?)",
            [
                (
                    j,
                    c["texts"][j][1][:200],
                    (last + timedelta(minutes=3 * j + 60 * (j // 40))).strftime(
                        "%Y-%m-%dT%H:%M:%SZ"
                    ),
                    f"h{j}",
                    "2025-01-01T00:00:00Z",
                )
                for j in range(n // 5)
            ],
        )
    index = TextIndex(db, NARRATIVE_INDEX)
    index.bind_vectors("bench-planted-384", 384)
    index.set_vectors((i + 1, v) for i, v in c["vectors"])
    db.close()


def run(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memory.db"
        build(path, n)
        db = open_database(path, AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS)
        memory = Memory(db, None, **memory_policies(DEFAULTS), clock=system_clock)
        t0 = time.perf_counter()
        first = run_all(memory)
        total = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = run_all(memory)
        again = time.perf_counter() - t0
        assert not second.changed, second.steps
        db.close()
    return {**first.seconds, "all": total, "all again": again}


def main(argv: list[str]) -> None:
    sizes, write = sizes_and_write(
        argv, "Time `tideline scripts all` on synthetic agent databases."
    )
    rows = {n: run(n) for n in sizes}
    columns = [*STEPS, "all", "all again"]
    lines = [
        "## Script layer on the agent database (`tideline scripts all`)",
        "",
        f"Machine: {machine()}. Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
        ".venv/bin/python bench/analysis_scripts.py --write`.",
        "Seconds per step of the first run (everything rebuilt); `all again` is a second run that "
        "finds nothing to change. Vectors are precomputed (no embedding is timed). Target: "
        "`scripts all` over 10k narratives under 60 s.",
        "",
        "| narratives | " + " | ".join(columns) + " |",
        "|---:|" + "---:|" * len(columns),
    ]
    lines += [
        f"| {n:,} | " + " | ".join(f"{row.get(c, 0.0):.2f}" for c in columns) + " |"
        for n, row in rows.items()
    ]
    body = "\n".join(lines)
    print(body)
    if write:
        write_section("analysis-scripts", body)


if __name__ == "__main__":
    main(sys.argv[1:])
