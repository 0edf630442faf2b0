"""Replay invariance on LoCoMo: one import vs the same history in stages, with a sleep after each.

Each conversation (default conv-26 and conv-30, all their sessions) is imported into a fresh
agent whose clock says December 2026 in one go, in thirds, and one session a night, a sleep after
each import. The model is the test suite's scripted one built from LoCoMo's own annotations
(`tests/consolidate/test_replay.py: locomo_model`: each session's `session_N_observation` items as
its observations; classification files an observation under its speaker and the first topic word
it names and supports the fact of that file it is shown), so every difference is the pipeline's.
For each staging: the facts, how many were ever confirmed and established, closed by expiry,
said again after they had lapsed (the same subject, category and value twice), open questions,
and how many profile items (facts with their timelines and evidence, strategies, events, edges,
people, the snapshot, "as of" five days) differ from the import in one go — 0 is the property.

    .venv/bin/python bench/replay.py --write
    .venv/bin/python bench/replay.py --engine postgresql   # a throwaway server (`pgserver`)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from _report import SHARED, machine, write_section

from tests.consolidate.conftest import QUIET, Agent
from tests.consolidate.test_replay import locomo_through, profile_of
from tests.llm_server import LLMServer

COLUMNS = (
    "facts", "confirmed", "established", "closed by expiry", "said again after lapsing",
    "open questions", "items differing from one go",
)  # fmt: skip


def counts(agent: Agent) -> dict[str, int]:
    p = agent.profile
    facts = p.facts()
    moves = {
        f.id: {c.to_status for c in p.timeline(f.id).changes if c.fact_id == f.id} for f in facts
    }
    why = {f.id: [c.why for c in p.timeline(f.id).changes if c.fact_id == f.id] for f in facts}
    keys = Counter((f.subject, f.category, f.value) for f in facts)
    return {
        "facts": len(facts),
        "confirmed": sum("confirmed" in m for m in moves.values()),
        "established": sum("established" in m for m in moves.values()),
        "closed by expiry": sum(f.status == "closed" and "expired" in why[f.id] for f in facts),
        "said again after lapsing": sum(n - 1 for n in keys.values() if n > 1),
        "open questions": len(p.strategies()),
    }  # fmt: skip


def differing(a: dict[str, Any], b: dict[str, Any]) -> int:
    """Profile items in one and not the other (`profile_of`'s lists), plus texts that differ."""
    out = 0
    for key in a:
        if isinstance(a[key], list):
            out += len(set(map(repr, a[key])) ^ set(map(repr, b[key])))
        else:
            out += int(a[key] != b[key])
    return out


def run(sample: str, sessions: int | None) -> list[tuple[str, dict[str, int]]]:
    conv = json.loads((SHARED / "locomo" / f"{sample}.json").read_text())
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    numbers = numbers[:sessions] if sessions else numbers
    step = -(-len(numbers) // 3)
    stagings = {
        "in one go": [numbers],
        "in thirds": [numbers[i : i + step] for i in range(0, len(numbers), step)],
        "a session a night": [[n] for n in numbers],
    }
    rows: list[tuple[str, dict[str, int]]] = []
    with LLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        for step_name, answer in QUIET.items():
            server.default(step_name, answer)
        reference: dict[str, Any] | None = None
        for i, (name, stages) in enumerate(stagings.items()):
            home = Path(tmp) / f"a{i}{sample.replace('-', '')}"  # on PostgreSQL: a namespace
            agent = locomo_through(server, conv, sample, stages, home)
            try:
                profile = profile_of(agent, record=True)
                reference = reference or profile
                rows.append((name, {**counts(agent), COLUMNS[-1]: differing(reference, profile)}))
            finally:
                agent.close()
    return rows


@contextmanager
def engine(name: str) -> Iterator[None]:
    """The agents' database: SQLite files, or a throwaway PostgreSQL (the `pgserver` wheel, as
    the test suite's) that every `Settings.load()` of the run points at."""
    if name == "sqlite":
        yield
        return
    import pgserver

    with tempfile.TemporaryDirectory(prefix="replay-pg-") as tmp:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = pgserver.get_server(Path(tmp) / "pg", "delete")
        os.environ["TIDELINE_DATABASE_URL"] = server.get_uri()
        os.environ["TIDELINE_DATABASE_USER"] = "replay"  # each agent: its own namespace
        try:
            yield
        finally:
            server.cleanup()


def table(
    results: dict[str, list[tuple[str, dict[str, int]]]], sessions: int | None, engine: str
) -> str:
    lines = [
        f"Replay invariance on LoCoMo ({sessions or 'all'} sessions each; {engine}; scripted "
        f"model from its annotations; clock 2026-12-01). {machine()}",
        "",
        "| conversation | staging | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---:|" * len(COLUMNS),
    ]
    for sample, rows in results.items():
        for name, row in rows:
            lines.append(
                f"| {sample} | {name} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", default="conv-26,conv-30", help="comma-separated")
    parser.add_argument("--sessions", type=int, default=None, help="first N sessions of each")
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks-history.md")
    args = parser.parse_args()
    samples = [s.strip() for s in args.conversations.split(",") if s.strip()]
    with engine(args.engine):
        results = {s: run(s, args.sessions) for s in samples}
    text = table(results, args.sessions, args.engine)
    print(text)
    if args.write:
        write_section("replay" if args.engine == "sqlite" else f"replay-{args.engine}", text)


if __name__ == "__main__":
    main()
