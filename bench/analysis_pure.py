"""Micro benchmark of the pure script layer (tideline.analysis) on synthetic corpora.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 .venv/bin/python bench/analysis_pure.py [--write] [N ...]

Items mix real LoCoMo observations (../shared/data/locomo, when present) with Chinese clauses built
from jieba's own dictionary and Russian phrases, so every script path is exercised and most texts
are unique. Vectors are 384-dimensional with planted structure (60 centres plus noise). Each size
gets a fresh keyword extractor, so caches start cold. Prints a markdown table in seconds.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from _report import SHARED, machine, sizes_and_write, write_section

from tideline.analysis import (
    KeywordExtractor,
    Turn,
    build_entity_graph,
    build_soft_clusters,
    build_topics,
    chunk_turns,
    chunks_to_markdown,
    to_dot,
)
from tideline.analysis.keywords import _jieba_posseg
from tideline.memory import WeightedNarrative, deflate_recent, recompute_weights, refresh_recurrence

LOCOMO = SHARED / "locomo"
RUSSIAN = [
    "граница",
    "память",
    "отказ",
    "бегство",
    "разговор",
    "решение",
    "доверие",
    "тревога",
    "работа",
    "дом",
    "семья",
    "друг",
    "ошибка",
    "проверка",
    "архитектура",
    "сон",
    "страх",
    "радость",
    "усталость",
    "вопрос",
    "ответ",
    "обещание",
    "встреча",
    "письмо",
    "дорога",
    "город",
    "море",
    "музыка",
    "книга",
    "болезнь",
    "надежда",
    "сомнение",
    "выбор",
    "привычка",
    "отладка",
]
ENTITIES = ["照照", "甜心", "阿洄", "Alice", "Bob", "Carol", "Dmitri", "Mei"]
ROLES = ["判断", "执行", "审查", "架构", "设计", "验收", "提问", "记录"]


def locomo_observations() -> list[str]:
    facts: list[str] = []
    for path in sorted(LOCOMO.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, by_speaker in data.items():
            if re.fullmatch(r"session_\d+_observation", key):
                facts += [text for rows in by_speaker.values() for text, _ in rows]
    return facts or ["Caroline attended an LGBTQ support group and found it inspiring."]


def chinese_vocabulary(rng: random.Random, size: int = 400) -> list[str]:
    """Frequent two-character nouns, verbs and adjectives from jieba's bundled dictionary."""
    import jieba

    path = Path(jieba.__file__).parent / "dict.txt"
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    words = [w for w, freq, tag in rows if len(w) == 2 and tag[0] in "nva" and int(freq) > 2000]
    return rng.sample(words, min(size, len(words)))


def make_corpus(n: int, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    facts = locomo_observations()
    zh = chinese_vocabulary(rng)
    zh_particles = ["的", "了", "和", "在", "我们", "她", "因为"]
    tags_vocab = [f"tag{i}" for i in range(max(50, n // 20))]
    texts, tags, roles, turns = [], {}, [], []
    start = datetime(2025, 1, 1, tzinfo=UTC)
    clock = start
    for i in range(n):
        parts = [facts[i % len(facts)]]
        parts.append("".join(rng.choice(zh) + rng.choice(zh_particles) for _ in range(4)) + "。")
        if i % 3 == 0:
            parts.append(" ".join(rng.choice(RUSSIAN) for _ in range(6)) + ".")
        texts.append((i, " ".join(parts)))
        # Zipf-like tag popularity: a few tags are everywhere, most are rare.
        tags[i] = [tags_vocab[min(int(rng.paretovariate(1.2)) - 1, len(tags_vocab) - 1)]]
        tags[i] += rng.sample(tags_vocab, rng.randint(0, 2))
        people = rng.sample(ENTITIES, rng.randint(1, 3))
        roles.append((i, "; ".join(f"{p}={'+'.join(rng.sample(ROLES, 2))}" for p in people)))
        clock += timedelta(minutes=rng.choice([1, 2, 5, 10, 90]))
        turns.append(Turn(i, clock, parts[0], rng.choice(["user", "agent"])))
    narratives = [
        WeightedNarrative(
            i,
            start + timedelta(minutes=i),
            rng.randint(1, 5),
            rng.randint(1, 5),
            3,
            rng.randint(1, 5),
            0.0,
        )
        for i in range(n)
    ]
    vrng = np.random.default_rng(seed)
    centres = vrng.normal(size=(60, 384)).astype(np.float32)
    vectors = centres[vrng.integers(0, 60, n)] + vrng.normal(scale=0.9, size=(n, 384)).astype(
        np.float32
    )
    return {
        "texts": texts,
        "tags": tags,
        "roles": roles,
        "turns": turns,
        "narratives": narratives,
        "vectors": [(i, vectors[i]) for i in range(n)],
        "cutoff": start + (clock - start) / 2,
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run(n: int) -> dict[str, float]:
    c = make_corpus(n)

    def weights() -> dict[Any, float]:
        rec = refresh_recurrence(c["tags"])
        new = recompute_weights(c["narratives"], rec)
        return deflate_recent(c["narratives"], weights=new)

    def graph() -> str:
        return to_dot(build_entity_graph(c["roles"]))

    def timeline() -> str:
        return chunks_to_markdown(chunk_turns(c["turns"], after=c["cutoff"]))

    row = {
        "topics": timed(lambda: build_topics(c["texts"], extractor=KeywordExtractor()))[0],
        "topics+merge": timed(
            lambda: build_topics(c["texts"], merge=True, extractor=KeywordExtractor())
        )[0],
        "recurrence+weights": timed(weights)[0],
        "soft clusters": timed(lambda: build_soft_clusters(c["vectors"]))[0],
        "entity graph": timed(graph)[0],
        "timeline": timed(timeline)[0],
    }
    # "topics+merge" repeats the topic work; the total counts each computation once.
    row["total"] = sum(v for k, v in row.items() if k != "topics+merge")
    return row


def main(argv: list[str]) -> None:
    sizes, write = sizes_and_write(
        argv, "Time the pure script-layer computations on synthetic corpora."
    )
    init, _ = timed(_jieba_posseg)
    rows = {n: run(n) for n in sizes}
    columns = list(next(iter(rows.values())))
    lines = [
        "## Pure script-layer computations (`tideline.analysis`, no database)",
        "",
        f"Machine: {machine()}. Command: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
        ".venv/bin/python bench/analysis_pure.py --write`.",
        f"Seconds per computation on synthetic corpora; jieba initialisation (once per "
        f"process): {init:.2f} s.",
        "",
        "| items | " + " | ".join(columns) + " |",
        "|---:|" + "---:|" * len(columns),
    ]
    lines += [
        f"| {n:,} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |"
        for n, row in rows.items()
    ]
    body = "\n".join(lines)
    print(body)
    if write:
        write_section("analysis-pure", body)


if __name__ == "__main__":
    main(sys.argv[1:])
