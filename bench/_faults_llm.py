"""Hostile LLM answers (issue 21 items 5 and 10): a whole sleep against an endpoint that answers
every step the same hostile way, on loopback.

Through the model's words (tests/llm_server.py): 10,000 observations per answer, 10,000
classification decisions, a 1 MB topic string. Below them, at the HTTP level
(tests/hostile_llm.py): a 50 MB body, a body cut inside its JSON, a connection dropped
mid-body, an answer that never ends. Each trial is one `Sleep.run` over a fresh agent with one
short session; a trial fails when it takes longer than `SECONDS`, when the Python heap peaks over
`PEAK_MB` (tracemalloc), when the run neither completes nor fails cleanly (status `done` or
`failed` with one-line errors that name the endpoint or the step), or when the cap it should hit
is not recorded.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _faults_report import Row

from tests.hostile_llm import HostileServer, Kind
from tests.llm_server import LLMServer
from tideline.app import Tideline
from tideline.config import Settings
from tideline.consolidate import SleepReport
from tideline.llm import llm_from_settings

SECONDS = 60.0
PEAK_MB = 64.0
QUIET: dict[str, Any] = {
    "behaviour": {"facts": []}, "classify": {"decisions": []}, "verify": {"verdicts": []},
    "arbitrate": {"decisions": []}, "edges": {"edges": []}, "user_model": {"dimensions": []},
    "trajectory": {"phase": "settling", "anchors": []},
}  # fmt: skip
OBS = {"type": "statement", "topic": "city", "text": "The user lives in Kyoto"}


@dataclass
class Trial:
    seconds: float
    peak_mb: float
    report: SleepReport

    def clean(self) -> bool:
        if self.report.status == "done":
            return True
        return self.report.status == "failed" and all(
            "\n" not in e and ("LLM endpoint" in e or "step" in e) for e in self.report.errors
        )


def _sleep(base: Path, url: str, name: str) -> Trial:
    home = base / name
    overrides = {"home": str(home), "embedder": "none", "llm_base_url": url,
                 "llm_model": "hostile", "llm_timeout": 5.0, "llm_max_retries": 1,
                 "llm_backoff": 0.01, "llm_backoff_max": 0.05}  # fmt: skip
    settings = Settings.load(env={}, overrides=overrides)
    app = Tideline(settings)
    try:
        app.memory.sync_turn("s1", "user", "I live in Kyoto and I work as a nurse.")
        sleep = app.sleep_using(llm_from_settings(settings))
        tracemalloc.start()
        started = time.monotonic()
        report = sleep.run()
        seconds = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        return Trial(seconds, peak, report)
    finally:
        app.close()


def _scripted(answers: dict[str, Any]) -> Callable[[Path, str], Trial]:
    def run(base: Path, name: str) -> Trial:
        with LLMServer() as server:
            for step, answer in {**QUIET, **answers}.items():
                server.default(step, answer)
            return _sleep(base, server.url, name)

    return run


def _hostile(kind: Kind) -> Callable[[Path, str], Trial]:
    def run(base: Path, name: str) -> Trial:
        with HostileServer(kind) as server:
            return _sleep(base, server.url, name)

    return run


CASES: dict[str, tuple[Callable[[Path, str], Trial], Callable[[Trial], bool]]] = {
    "10,000 observations per extraction answer": (
        _scripted({"extract": {"observations": [OBS] * 10_000}}),
        lambda t: "observations: cut at 60 of 10000" in t.report.steps[1].cuts,
    ),
    "10,000 decisions per classification answer": (
        _scripted(
            {
                "extract": {"observations": [OBS]},
                "classify": {"decisions": [{"observation": 1, "action": "new"}] * 10_000},
            }
        ),
        lambda t: any("decisions: cut at 80 of 10000" in s.cuts for s in t.report.steps),
    ),
    "a 1 MB topic in every observation": (
        _scripted({"extract": {"observations": [{**OBS, "topic": "t" * 2**20}]}}),
        lambda t: (
            "observations.0.topic: cut at 200 of 1048576 characters" in t.report.steps[1].cuts
        ),
    ),
    "a 50 MB answer body": (
        _hostile("body_50mb"),
        lambda t: "with a body over 2,097,152 bytes" in " ".join(t.report.errors),
    ),
    "an answer body cut inside its JSON": (
        _hostile("truncated_json"),
        lambda t: "the answer body was not complete JSON" in " ".join(t.report.errors),
    ),
    "a connection dropped mid-body": (
        _hostile("cut_connection"),
        lambda t: "connection failed" in " ".join(t.report.errors),
    ),
    "an answer that never ends (1 byte / 20 ms)": (
        _hostile("endless"),
        lambda t: "did not answer step 'extract' within 5s" in " ".join(t.report.errors),
    ),
}


def hostile_answers(base: Path, trials: int) -> list[Row]:
    """One row per hostile answer: `trials` sleeps, each bounded, clean and recording its cap."""
    rows = []
    for test, (run, recorded) in CASES.items():
        done: list[Trial] = []
        failures = 0
        for n in range(trials):
            trial = run(base, f"{len(rows)}-{n}")
            done.append(trial)
            bounded = trial.seconds < SECONDS and trial.peak_mb < PEAK_MB
            failures += not (bounded and trial.clean() and recorded(trial))
        worst = max(done, key=lambda t: t.seconds)
        cuts = [s.cuts for s in worst.report.steps if s.cuts]
        said = (worst.report.errors or cuts or [worst.report.status])[0]
        figure = (
            f"sleep {worst.report.status}; max {worst.seconds:.1f} s, heap peak "
            f"{max(t.peak_mb for t in done):.1f} MB, {worst.report.tokens.get('calls', 0)} "
            f"calls; {json.dumps(said[:160])}"
        )
        rows.append(Row(f"hostile LLM answer: {test}", trials, failures, figure))
    return rows
