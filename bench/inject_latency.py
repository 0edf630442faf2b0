"""Latency of the injection hooks on a large memory: 10k narratives, 50k turns.

The memory is built fast — rows inserted with SQL, texts indexed with `TextIndex.upsert_many`,
random unit vectors set directly — except for a few planted memories whose vectors are real e5
embeddings, so that some messages find T1 hits (T4 skipped) and others do not (T4 runs). Only
the query embedding inside `prefetch()` is real work of the embedder, as in production.
The profile (200 facts through the Changeset API, embedded with e5, edges, open questions, a
snapshot) is attached, so every prefetch also runs T1p/T1q; one row measures session memory.

    .venv/bin/python bench/inject_latency.py [--queries 200]

Writes the `inject` section of docs/benchmarks-history.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _report import machine, ms_stats, write_section

from tideline.app import Tideline, inject_config
from tideline.config import Settings
from tideline.embed import E5Embedder
from tideline.inject import MemoryProvider
from tideline.memory import compute_weight
from tideline.profile import FactDraft

N_NARRATIVES = 10_000
N_TURNS = 50_000
TURNS_PER_SESSION = 100
PLANTED = [
    "Kai got the bakery job in Lisbon and moves there in June",
    "Anna helped Kai find a flat near the river in Lisbon",
    "Kai is nervous about leaving his friends behind when he moves",
    "Kai's garden: tomatoes and basil did well this summer",
    "Kai and Anna argued about money for the move, then made up",
    "Kai started learning Portuguese with an app every morning",
]
RELATED = [
    "how is the Lisbon move going?",
    "did Kai find somewhere to live?",
    "is Kai still learning Portuguese?",
    "what happened with the garden tomatoes?",
    "are Kai and Anna okay after the argument about money?",
]
FACTS = [
    ("city", "moving to Lisbon in June for the bakery job"),
    ("home", "looking for a flat near the river in Lisbon"),
    ("language", "learning Portuguese with an app every morning"),
    ("hobby", "grows tomatoes and basil in the garden"),
    ("family", "argued with his sister Anna about money for the move"),
]
N_FACTS = 200
UNRELATED = [
    "what's the capital of Mongolia?",
    "write a haiku about rain on a tin roof",
    "explain how a heat pump works",
    "recommend a sci-fi novel about first contact",
    "what is 17 times 23?",
]


def words(rng: np.random.Generator, vocab: list[str], n: int) -> str:
    return " ".join(vocab[i] for i in rng.integers(0, len(vocab), n))


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def build(home: Path, e5: E5Embedder) -> Tideline:
    rng = np.random.default_rng(7)
    vocab = [
        f"{a}{b}"
        for a in ("ka", "lo", "mi", "su", "te", "ri", "no", "ba")
        for b in ("ren", "dol", "mit", "vas", "quo", "lin", "sep", "tar", "gum", "hex")
    ] * 2
    vocab += [
        "the",
        "a",
        "and",
        "to",
        "of",
        "in",
        "my",
        "we",
        "it",
        "was",
        "that",
        "is",
        "for",
        "on",
        "with",
        "you",
        "he",
        "she",
    ]
    home.mkdir(parents=True)
    (home / "SOUL.md").write_text(
        "# Who I am\n\n" + "I am Hui, Kai's companion; I remember and I listen. " * 120
    )
    app = Tideline(Settings.load(overrides={"home": str(home), "agent_name": "hui"}), embedder=e5)
    db, m = app.db, app.memory
    t0 = time.perf_counter()
    n_sessions = N_TURNS // TURNS_PER_SESSION
    base = np.datetime64("2025-01-01T00:00:00")
    with db.transaction():
        db.executemany(
            "INSERT INTO sessions(id, key, source, created_at) VALUES (?, ?, 'bench', ?)",
            [(s + 1, f"bench-{s + 1}", "2025-01-01T00:00:00Z") for s in range(n_sessions)],
        )
        rows, texts = [], []
        for i in range(N_TURNS):
            s, seq = divmod(i, TURNS_PER_SESSION)
            ts = str(base + np.timedelta64(s * 86_400 // 2 + seq * 60, "s")) + "Z"
            text = words(rng, vocab, int(rng.integers(8, 40)))
            rows.append(
                (
                    i + 1,
                    s + 1,
                    seq + 1,
                    "user" if seq % 2 == 0 else "assistant",
                    text,
                    ts,
                    hashlib.sha256(f"{i}".encode()).hexdigest(),
                    ts,
                )
            )
            texts.append((i + 1, text))
        db.executemany(
            "INSERT INTO turns(id, session_id, seq, role, text, ts, hash, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.execute(
            "UPDATE sessions SET started_at = (SELECT min(ts) FROM turns t WHERE t.session_id ="
            " sessions.id), ended_at = (SELECT max(ts) FROM turns t WHERE t.session_id = sessions.id)"
        )
    m.raw.index.upsert_many(texts)
    nrows, ntexts, links = [], [], []
    for i in range(N_NARRATIVES):
        nid = i + 1
        planted = i >= N_NARRATIVES - len(PLANTED)
        gesture = PLANTED[i - N_NARRATIVES + len(PLANTED)] if planted else words(rng, vocab, 12)
        context = words(rng, vocab, int(rng.integers(0, 40)))
        imp, emo, rec, unr = (int(x) for x in rng.integers(1, 6, 4))
        kind = "reflection" if i % 200 == 0 else "narrative"
        day = int(i * (N_TURNS // TURNS_PER_SESSION) / 2 / N_NARRATIVES)
        stamp = str(base + np.timedelta64(day, "D")) + "T12:00:00Z"
        nrows.append(
            (
                nid,
                gesture,
                context,
                imp,
                emo,
                rec,
                unr,
                compute_weight(imp, emo, rec, unr),
                kind,
                stamp,
                stamp,
            )
        )
        ntexts.append((nid, f"{gesture}\n{context}"))
        turn = int(rng.integers(1, N_TURNS + 1))
        links += [(nid, turn), (nid, min(N_TURNS, turn + 1))]
    with db.transaction():
        db.executemany(
            "INSERT INTO narratives(id, gesture, context, importance, emotional, recurrence,"
            " unresolved, weight, kind, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            nrows,
        )
        db.executemany("INSERT INTO narrative_links(narrative_id, turn_id) VALUES (?, ?)", links)
        db.executemany(
            "INSERT INTO topic_clusters(id, keyword, label, size, keywords, built_at)"
            " VALUES (?, ?, ?, ?, ?, '2026-05-01T00:00:00Z')",
            [
                (i + 1, f"k{i}", f"topic {i}", 200 - i, json.dumps(vocab[i % 80 : i % 80 + 5]))
                for i in range(150)
            ],
        )
    m.narratives.index.upsert_many(ntexts)
    dim = e5.dim
    for index, n in ((m.narratives.index, N_NARRATIVES), (m.raw.index, N_TURNS)):
        index.bind_vectors(e5.model_id, dim)
        vectors = unit(rng, n, dim)
        if index is m.narratives.index:
            vectors[-len(PLANTED) :] = e5.embed_documents(PLANTED)
        index.set_vectors(zip(range(1, n + 1), vectors, strict=True))
    build_profile(app, rng, vocab, e5)
    print(
        f"built {N_NARRATIVES:,} narratives, {N_TURNS:,} turns, {N_FACTS} facts in"
        f" {time.perf_counter() - t0:.1f}s"
    )
    return app


def build_profile(
    app: Tideline, rng: np.random.Generator, vocab: list[str], e5: E5Embedder
) -> None:
    """Facts (a few planted on the RELATED topics), a causal edge from each planted fact, one
    open question per planted fact, a snapshot; all indexed and embedded as Sleep's post step."""
    cs = app.profile.read().changeset()
    planted = [cs.add_fact(FactDraft("user", c, v), turn_ids=(1,)) for c, v in FACTS]
    noise = [
        cs.add_fact(FactDraft("user", f"c{i % 40}", words(rng, vocab, 6)), turn_ids=(1,))
        for i in range(N_FACTS - len(FACTS))
    ]
    for n, ref in enumerate(planted):
        cs.add_edge("causes", noise[n], ref)
        cs.add_strategy("probe", ref, f"Ask about {FACTS[n][1]}?")
    app.profile.apply(cs)
    text = "# What I know\n\n" + "\n".join(f"- {c}: {v}" for c, v in FACTS)
    cs = app.profile.read().changeset()
    cs.snapshot(text, {"facts": []})
    app.profile.apply(cs)
    app.profile.index_facts(e5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=30)
    args = parser.parse_args()
    e5 = E5Embedder()
    e5.embed_query("warm up")
    with tempfile.TemporaryDirectory() as tmp:
        app = build(Path(tmp) / "home", e5)
        config = inject_config(app.settings)  # T1 and T1p: the search's relevance floor
        t = time.perf_counter()
        sessions = app.session_memory

        def make() -> MemoryProvider:
            return MemoryProvider(app.memory, config, profile=app.profile, session_memory=sessions)

        first = make().prefetch_block("warm up the caches")
        first_ms = (time.perf_counter() - t) * 1000
        block_times, block_tokens = [], []
        for _ in range(args.blocks):  # a fresh provider per session start: no warm token counts
            provider = make()
            t = time.perf_counter()
            block = provider.identity()
            block_times.append(time.perf_counter() - t)
            block_tokens.append(block.tokens)
        provider = make()
        times: dict[bool, list[float]] = {True: [], False: []}
        tokens: list[int] = []
        profile_parts: set[str] = set()
        messages = (RELATED + UNRELATED) * (args.queries // 10 + 1)
        for i, msg in enumerate(messages[: args.queries]):
            msg = f"{msg} ({i})"  # every message distinct: a real query embedding each time
            t = time.perf_counter()
            turn = provider.prefetch_block(msg)
            ran_t4 = any(n.startswith("T4: ran") for n in turn.notes)  # it may find nothing
            times[ran_t4].append(time.perf_counter() - t)
            tokens.append(turn.tokens)
            profile_parts.update(x for x in ("T1p", "T1q") if x in turn.tiers)
        # The profile's and session memory's share, each call paired with one without them.
        bare = MemoryProvider(app.memory, config)
        with_session, paired, without = [], [], []
        for i, msg in enumerate(messages[: args.queries // 4]):
            t = time.perf_counter()
            provider.prefetch_block(f"{msg} [{i}]", session=f"bench-{i % 500 + 1}")
            with_session.append(time.perf_counter() - t)
            t = time.perf_counter()
            provider.prefetch_block(f"{msg} <{i}>")
            paired.append(time.perf_counter() - t)
            t = time.perf_counter()
            bare.prefetch_block(f"{msg} {{{i}}}")
            without.append(time.perf_counter() - t)
        embed = []
        for i in range(50):
            t = time.perf_counter()
            e5.embed_query(f"embedding alone {i}")
            embed.append(time.perf_counter() - t)
        sections = {s.tier: s.tokens for s in block.sections}
        app.close()
    every = times[True] + times[False]
    rows = [
        ("`system_prompt_block()` (T0 T2 T2b T3)", block_times),
        ("`prefetch()` all messages", every),
        ("`prefetch()` T1 only (≥ 2 memories found)", times[False]),
        ("`prefetch()` T1 + T4 (hybrid search ran)", times[True]),
        ("`prefetch(session=…)` + session memory (T1s, no LLM)", with_session),
        ("`prefetch()` with the profile (paired with the next row)", paired),
        ("`prefetch()` without profile or session memory", without),
        ("e5 query embedding alone", embed),
    ]
    lines = [
        "## Injection hooks (T0–T4)",
        "",
        f"Memory: {N_NARRATIVES:,} narratives, {N_TURNS:,} turns in {N_TURNS // TURNS_PER_SESSION}"
        " sessions, 150 topic clusters, a ~1,400-token SOUL.md; random unit vectors plus 6 planted"
        f" e5 embeddings; a profile of {N_FACTS} facts (e5-embedded, 5 on the related topics, each"
        " with a causal edge and an open question) and its snapshot; default settings (budgets"
        " T0 3000, T2 1500, T2b 3000, T3 1500, T1 1500, T1s 800, T1p 500, T1q 150, T4 1500; T1 and"
        " T1p cut by the search's relevance floor, docs/inject.md). Every prefetch embeds a new"
        " message with the bundled e5, searches the facts and writes its attention-log rows."
        " `.venv/bin/python bench/inject_latency.py` (default threads; loading e5 caps BLAS at one).",
        "",
        "| call | runs | p50 ms | p95 ms |",
        "|---|---|---|---|",
    ]
    for name, values in rows:
        if not values:
            continue
        p50, p95 = ms_stats(values)
        lines.append(f"| {name} | {len(values)} | {p50} | {p95} |")
    lines += [
        "",
        f"First prefetch after opening (loads the vector matrices): {first_ms:.0f} ms"
        f" ({', '.join(first.tiers)}).",
        f"Tokens (e5 tokenizer): identity block {statistics.median(block_tokens):.0f}"
        f" ({', '.join(f'{k} {v}' for k, v in sections.items())}); prefetch block median"
        f" {statistics.median(tokens):.0f}, max {max(tokens)}; profile tiers seen in prefetch:"
        f" {', '.join(sorted(profile_parts)) or 'none'}.",
        "",
        f"Machine: {machine()}.",
    ]
    body = "\n".join(lines)
    print(body)
    write_section("inject", body)


if __name__ == "__main__":
    main()
