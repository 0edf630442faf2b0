"""What reaches the agent through Hermes: LoCoMo replayed through Hermes Agent's own MemoryManager.

Each conversation of ../shared/data/locomo goes through hermes-agent 0.19's `MemoryManager` as a
Hermes user's would: one Hermes session per LoCoMo session (`on_session_switch`), each exchange as
`on_turn_start` then `sync_all` (the two speakers named in the messages, the clock at the
session's date: a `ManualClock` the provider reads), `on_session_end` at each session's end. Then,
in a new session, every question of categories 1-4 goes through `prefetch_all` (Hermes's thread
and 8 s timeout) and the block Hermes would fence in `<memory-context>` is scored:

- evidence in the block: the share of the question's gold evidence turns whose text is in it;
- Hit@1: whether the block's first item is an evidence turn;
- block tokens (the e5 tokenizer), prefetch p50/p95, and the share over Hermes's 8 s timeout;
- beside them, from the same run: search recall@5 of the evidence turns (`Memory.search`, turns
  only, k=5) and one uncached e5 query embedding per question (p50/p95).

Hermes's bundled offline provider, `holographic`, goes through the same harness as the reference a
Hermes user has today (with `auto_extract` on, its end-of-session fact extraction); the table
says how many facts it stored. No LLM runs, so nothing is consolidated (the sleep is off):
this measures the raw turns and search. Embeds every turn: run it under the embedding lock.

    flock /work/embed.lock .venv/bin/python bench/hermes_reach.py            # all five, both
    .venv/bin/python bench/hermes_reach.py --convs conv-30 --questions 20     # a quick look
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
import yaml
from _report import SHARED, machine, ms_stats, write_section

from tideline.clock import ManualClock

DATA = SHARED / "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TIMEOUT = 8.0  # Hermes's prefetch timeout (agent/memory_manager.py)
_ID = re.compile(r"D:?(\d+):(\d+)")
_ITEM = re.compile(r"^\[t:(\d+) ", re.MULTILINE)
_DATE = "%I:%M %p on %d %B, %Y"


@dataclass
class Scores:
    evidence: list[float] = field(default_factory=list)
    hit1: list[float] = field(default_factory=list)
    recall5: list[float] = field(default_factory=list)
    search_hit1: list[float] = field(default_factory=list)  # the search's own first hit
    tokens: list[int] = field(default_factory=list)
    prefetch: list[float] = field(default_factory=list)
    embed: list[float] = field(default_factory=list)
    stored: int = 0
    questions: int = 0


def evidence_ids(raw: list[str]) -> set[str]:
    """LoCoMo's evidence ids, normalised (`D8:6; D9:17` → two ids, `D:11:26` → `D11:26`)."""
    ids = set()
    for item in raw:
        for part in re.split(r"[;,]", item.replace(" ", "")):
            m = _ID.fullmatch(part)
            if m:
                ids.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return ids


def normal(text: str) -> str:
    return " ".join(text.split()).lower()


def text_of(turn: dict[str, Any]) -> str:
    """A turn's text as LoCoMo's importer keeps it (a shared photo's caption appended)."""
    text = str(turn.get("text", ""))
    if turn.get("blip_caption"):
        text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
    return text


def provider_for(kind: str, home: Path, clock: ManualClock) -> Any:
    if kind == "tideline":
        from tideline.hermes import TidelineProvider

        return TidelineProvider(clock=clock, drain_seconds=600)
    from plugins.memory.holographic import HolographicMemoryProvider

    return HolographicMemoryProvider({"db_path": str(home / "holo.db"), "auto_extract": True})


def replay(path: Path, kind: str, home: Path, cache: Path, limit: int | None) -> Scores:
    """One conversation through Hermes's MemoryManager, then its questions."""
    from agent.memory_manager import MemoryManager

    from tideline.embed import E5Embedder
    from tideline.inject import TokenCounter

    data = json.loads(path.read_text())
    conv = path.stem
    a = data["speaker_a"]
    numbers = sorted(
        int(k.split("_")[1])
        for k in data
        if re.fullmatch(r"session_\d+", k) and isinstance(data[k], list) and data[k]
    )
    config = {
        "memory": {
            "provider": kind,
            "tideline": {"sleep_on_exit": False, "cache_path": str(cache)},
        }
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    start = dt.datetime.strptime(data[f"session_{numbers[0]}_date_time"], _DATE)
    clock = ManualClock(start)
    provider = provider_for(kind, home, clock)
    mm = MemoryManager()
    mm.add_provider(provider)
    first = f"{conv}-s{numbers[0]}"
    mm.initialize_all(
        session_id=first,
        hermes_home=str(home),
        platform="cli",
        agent_context="primary",
        user_name=a,
    )
    dia: dict[tuple[str, int], str] = {}  # (session key, seq) → dia_id
    texts: dict[str, str] = {}
    kept = 0
    for n in numbers:
        key = f"{conv}-s{n}"
        began = dt.datetime.strptime(data[f"session_{n}_date_time"], _DATE)
        if key != first:
            mm.on_session_switch(key, reset=True)
        turns = [t for t in data[f"session_{n}"] if text_of(t).strip()]
        for seq, t in enumerate(turns, 1):
            dia[(key, seq)] = t["dia_id"]
            texts[t["dia_id"]] = text_of(t)
        messages: list[dict[str, Any]] = []
        for i in range(0, len(turns), 2):
            said, reply = turns[i], turns[i + 1] if i + 1 < len(turns) else None
            clock.set(began + dt.timedelta(minutes=i))
            mm.on_turn_start(i // 2 + 1, text_of(said))
            clock.set(began + dt.timedelta(minutes=i + 1))
            messages.append({"role": "user", "content": text_of(said), "name": said["speaker"]})
            if reply is not None:
                messages.append(
                    {"role": "assistant", "content": text_of(reply), "name": reply["speaker"]}
                )
            mm.sync_all(
                text_of(said),
                text_of(reply) if reply else "",
                session_id=key,
                messages=list(messages),
            )
            mm.flush_pending(60)  # its sync_turn read the clock before it moves on
            kept += 2 if reply else 1
        mm.on_session_end(messages)
    mm.flush_pending(600)
    scores = Scores()
    app = getattr(provider, "app", None)
    if app is not None:
        deadline = time.monotonic() + 1800
        while provider.kept < kept and time.monotonic() < deadline:
            time.sleep(0.2)
        scores.stored = provider.kept
        ids = {
            (str(r["key"]), int(r["seq"])): int(r["id"])
            for r in app.db.rows(
                "SELECT t.id, t.seq, s.key FROM turns t JOIN sessions s ON s.id = t.session_id"
            )
        }
        by_id = {tid: dia[k] for k, tid in ids.items() if k in dia}
    else:
        scores.stored = int(
            provider._store._conn.execute("SELECT count(*) FROM facts").fetchone()[0]
        )
        by_id = {}
    mm.on_session_switch(f"{conv}-questions", reset=True)
    clock.advance(days=1)
    e5 = E5Embedder()
    count = TokenCounter(e5)
    asked = [q for q in data["qa"] if q.get("category") in CATEGORIES]
    for q in asked[:limit]:
        gold = evidence_ids(q.get("evidence", []))
        if not gold:
            continue
        question = str(q["question"])
        t0 = time.perf_counter()
        block = mm.prefetch_all(question)
        scores.prefetch.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        e5.embed_query(question)
        scores.embed.append(time.perf_counter() - t0)
        seen = normal(block)
        scores.evidence.append(sum(normal(texts.get(g, "\0")) in seen for g in gold) / len(gold))
        first_item = _ITEM.search(block)
        scores.hit1.append(float(bool(first_item) and by_id.get(int(first_item.group(1))) in gold))
        scores.tokens.append(count(block) if block else 0)
        if app is not None:
            found = app.memory.search(question, 5, include_turns=True)
            top = {by_id.get(h.id) for h in found.hits if h.type == "turn"}
            scores.recall5.append(len(top & gold) / len(gold))
            first = found.hits[0] if found.hits else None
            scores.search_hit1.append(float(first is not None and by_id.get(first.id) in gold))
        scores.questions += 1
    mm.shutdown_all()
    return scores


def forget_queries(cache: Path) -> None:
    """Drop the cache's query vectors (kind "q"): the prefetch must embed each question."""
    db = apsw.Connection(str(cache))
    db.execute("DELETE FROM embeddings WHERE kind = 'q'")
    db.close()


def table(results: dict[str, Scores]) -> str:
    rows = [
        "| provider | questions | stored | evidence in block | search recall@5 | Hit@1 "
        "| search Hit@1 | block tokens p50 / p95 | prefetch ms p50 / p95 | over 8 s "
        "| e5 query ms p50 / p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|",
    ]
    for kind, s in results.items():
        tokens = sorted(s.tokens)
        p95 = tokens[int(0.95 * (len(tokens) - 1))] if tokens else 0
        recall = f"{statistics.mean(s.recall5):.3f}" if s.recall5 else "–"
        first = f"{statistics.mean(s.search_hit1):.3f}" if s.search_hit1 else "–"
        over = sum(t >= TIMEOUT for t in s.prefetch) / max(len(s.prefetch), 1)
        stored = f"{s.stored} {'turns' if kind == 'tideline' else 'facts'}"
        rows.append(
            f"| {kind} | {s.questions} | {stored} | {statistics.mean(s.evidence):.3f} | {recall} "
            f"| {statistics.mean(s.hit1):.3f} | {first} | {statistics.median(tokens):.0f} / {p95} "
            f"| {' / '.join(ms_stats(s.prefetch))} | {over:.3f} | {' / '.join(ms_stats(s.embed))} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--convs", nargs="*", help="conversation names (default: all five)")
    parser.add_argument(
        "--providers",
        nargs="*",
        default=["tideline", "holographic"],
        choices=["tideline", "holographic"],
        help="memory providers to run (default: both)",
    )
    parser.add_argument("--questions", type=int, help="at most this many questions a conversation")
    parser.add_argument(
        "--cache",
        type=Path,
        help="embedding cache to reuse for the turns; its query vectors are dropped first, so "
        "every question still embeds for real (default: a new cache)",
    )
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks-history.md")
    args = parser.parse_args()
    paths = sorted(DATA.glob("conv-*.json"))
    if args.convs:
        paths = [p for p in paths if p.stem in args.convs]
    if not paths:
        sys.exit(f"no LoCoMo conversations in {DATA}")
    results: dict[str, Scores] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hermes-reach-") as tmp:
        cache = args.cache or Path(tmp) / "embed-cache.db"
        if cache.exists():
            forget_queries(cache)
        for kind in args.providers:
            total = Scores()
            for path in paths:
                home = Path(tmp) / kind / path.stem
                home.mkdir(parents=True)
                s = replay(path, kind, home, cache, args.questions)
                for name in (
                    "evidence",
                    "hit1",
                    "recall5",
                    "search_hit1",
                    "tokens",
                    "prefetch",
                    "embed",
                ):
                    getattr(total, name).extend(getattr(s, name))
                total.stored += s.stored
                total.questions += s.questions
                print(f"{kind} {path.stem}: {s.questions} questions", file=sys.stderr)
            results[kind] = total
    body = (
        f"## What reaches the agent through Hermes ({dt.date.today()}, {machine()}, "
        f"{time.perf_counter() - started:.0f} s)\n\n"
        f"`bench/hermes_reach.py` over {', '.join(p.stem for p in paths)}: LoCoMo replayed "
        "through hermes-agent 0.19's MemoryManager, each question through prefetch_all in a new "
        "session; no LLM, so no sleep.\n\n" + table(results)
    )
    print(body)
    if args.write:
        write_section("hermes-reach", body)


if __name__ == "__main__":
    main()
