"""Tokens and seconds per dream layer on a LoCoMo conversation replayed as one day.

The sessions of one LoCoMo conversation (default conv-26) are stamped onto one day (session i at
00:30 + 70·i minutes, a turn a minute) and synced into a fresh agent; then one `Dream.run` for
that day: solidify → sleep → scripts → comb → drift → dream.

No usable model runs here, so the model is the scripted OpenAI-protocol server of the test suite
(`tests/llm_server.py`) with answers derived from each request, sized like a model's: solidify
keeps one memory per chunk of the scanner (linked to its first turns), combing re-weighs two
memories, writes one self-concept sentence and opens a thread, the drift finds a connection, the
dream has three symbols; the Sleep steps answer "nothing found". Tokens are counted with
Tideline's estimate (`tideline.llm.prompt_tokens`, ~4 characters a token) for the prompt the
pipeline really sent and the scripted answer — so the prompt side is what a real model would read.
With a configured endpoint (`--real`, TIDELINE_LLM_BASE_URL/TIDELINE_LLM_MODEL) the same run goes
to that model and the tokens are its own.

    .venv/bin/python bench/dream_day.py --sessions 3 --sessions 0 --write   # 0: all sessions
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from _report import SHARED, machine, write_section

from tests.consolidate.conftest import QUIET
from tests.llm_server import Answer, LLMServer
from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import estimate_tokens
from tideline.llm import STEP_HEADER, prompt_tokens

DATA = SHARED / "locomo"
DAY = "2026-03-14"
SEED = (7000, 17000)  # the Tideline seed's daily total for the full DREAM pipeline


class DayModel(LLMServer):
    """Answers each dream step from its request, like a terse but diligent model."""

    def chat(self, body: dict[str, Any], headers: Mapping[str, str]) -> Any:
        step = headers.get(STEP_HEADER, "")
        user = body["messages"][-1]["content"]
        answer: Any = QUIET.get(step, {})
        if step == "dream_solidify":
            memories = []
            for chunk in user.split("\n## Chunk")[1:]:
                ids = [int(i) for i in re.findall(r"`(\d+)`", chunk)]
                first = re.search(r"`\d+`[^:]*: (.+)", chunk)
                text = first.group(1)[:160] if first else "a conversation"
                memories.append(
                    {
                        "gesture": f"I listened as they talked: {text}",
                        "context": "One sitting of the day's conversation, in their words.",
                        "cognition_direction": "Worth remembering what they care about.",
                        "importance": 3,
                        "emotional": 3,
                        "unresolved": 2,
                        "tags": ["conversation"],
                        "source_links": ids[:3],
                    }
                )
            answer = {"memories": memories}
        elif step == "dream_digest":
            ids = [int(i) for i in re.findall(r"^\[(\d+)\]", user, re.M)]
            answer = {
                "reweigh": [{"id": i, "importance": 4, "why": "it recurs"} for i in ids[:2]],
                "self_concept": [
                    {"text": "I pay attention to what people are building.", "rests_on": ids[:2]}
                ],
                "threads_open": [
                    {"title": "What will come of their plans?", "why": "", "raised_by": ids[:1]}
                ],
            }
        elif step == "dream_drift":
            answer = {
                "found": True,
                "connection": "Both memories are about making something last.",
                "gesture": "Making things last runs under both.",
                "emotional": 3,
                "unresolved": 2,
            }
        elif step == "dream_sleep":
            answer = {
                "symbols": ["a paint brush", "a harbour", "a letter"],
                "story": "I painted a harbour on a letter that kept arriving.",
                "reflection": "I keep what others almost let go.",
                "emotional": 3,
                "unresolved": 2,
            }
        content = json.dumps(answer, ensure_ascii=False)
        self.script(
            Answer(content, prompt_tokens(body["messages"]), estimate_tokens(content)), step=step
        )
        return super().chat(body, headers)


def load_day(app: Tideline, sample: str, sessions: int) -> tuple[int, int]:
    conv = json.loads((DATA / f"{sample}.json").read_text())
    names = sorted(
        (k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
    )
    if sessions:
        names = names[:sessions]
    turns = 0
    for i, name in enumerate(names):
        for j, t in enumerate(conv[name]):
            minute = 30 + 70 * i + j
            role = "user" if t["speaker"] == conv["speaker_a"] else "assistant"
            app.memory.sync_turn(
                f"locomo/{sample}/{name}",
                role,
                t["text"],
                speaker=t["speaker"],
                timestamp=f"{DAY}T{minute // 60:02d}:{minute % 60:02d}:00Z",
                external_id=t.get("dia_id"),
            )
            turns += 1
    return len(names), turns


def run(sample: str, sessions: int, embedder: str, real: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        values: dict[str, Any] = {"home": tmp, "embedder": embedder, "dream_run_budget": 0}
        if real:
            settings = Settings.load(overrides=values)
            return _measure(settings, sample, sessions, settings.llm_model)
        with DayModel() as server:
            values |= {"llm_base_url": server.url, "llm_model": "scripted", "llm_timeout": 30.0}
            return _measure(Settings.load(overrides=values), sample, sessions, "scripted server")


def _measure(settings: Settings, sample: str, sessions: int, model: str) -> dict[str, Any]:
    app = Tideline(settings)
    try:
        n_sessions, turns = load_day(app, sample, sessions)
        report = app.dream.run(date=DAY)
        assert report.ok, report.lines()
        return {
            "sample": sample,
            "sessions": n_sessions,
            "turns": turns,
            "model": model,
            "layers": [
                (r.name, r.tokens_in, r.tokens_out, r.seconds, r.written, r.note)
                for r in report.layers
            ],
            "total_in": report.tokens_in,
            "total_out": report.tokens_out,
            "seconds": report.seconds,
        }
    finally:
        app.close()


def table(results: list[dict[str, Any]], embedder: str) -> str:
    out = [
        "## Dream pipeline on one day (bench/dream_day.py)",
        "",
        f"Machine: {machine()}. Embedder: {embedder}. The sessions of LoCoMo "
        f"{results[0]['sample']} replayed as one day; model: {results[0]['model']} (answers "
        "derived from each request; prompt tokens are Tideline's estimate of what was really "
        "sent, ~4 characters a token). The seed's reference is 7,000–17,000 tokens a day.",
        "",
    ]
    for r in results:
        total = r["total_in"] + r["total_out"]
        where = (
            "below"
            if total < SEED[0]
            else "within"
            if total <= SEED[1]
            else f"{total / SEED[1]:.1f}× above"
        )
        out += [
            f"### {r['sessions']} session(s), {r['turns']} turns",
            "",
            "| layer | tokens in | tokens out | seconds | written |",
            "|---|---:|---:|---:|---|",
        ]
        for name, tin, tout, secs, written, _ in r["layers"]:
            what = ", ".join(f"{k} {len(v)}" for k, v in written.items() if v) or "—"
            out.append(f"| {name} | {tin:,} | {tout:,} | {secs:.2f} | {what} |")
        out += [
            f"| **total** | **{r['total_in']:,}** | **{r['total_out']:,}** | "
            f"**{r['seconds']:.2f}** | |",
            "",
            f"{total:,} tokens: {where} the seed's range.",
            "",
        ]
    out += [
        "Where the tokens go: solidify reads every unindexed turn of the day once (cut at 500",
        "characters a turn) and Sleep's extraction reads each session again, so both grow with the",
        "day's conversation; combing, drift and the dream read memories, not turns, and stay",
        "roughly constant. A day of a few sessions fits the seed's range; a day with the whole",
        "conversation (months of LoCoMo sessions in one day) is far above any real day.",
    ]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", default="conv-26")
    parser.add_argument("--sessions", type=int, action="append", help="0: all; repeatable")
    parser.add_argument("--embedder", default="none", help="none (default) or e5")
    parser.add_argument("--real", action="store_true", help="the configured endpoint")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks-history.md")
    args = parser.parse_args()
    results = [run(args.sample, n, args.embedder, args.real) for n in (args.sessions or [3])]
    text = table(results, args.embedder)
    print(text)
    if args.write:
        write_section("dream-day", text)


if __name__ == "__main__":
    main()
