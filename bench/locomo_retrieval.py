"""LoCoMo turn retrieval: evidence recall@5/@10 per category for lex, vec and hybrid fusions.

Each conversation of ../shared/data/locomo is imported into its own fresh home (turns + real e5
embeddings); every question of categories 1–4 retrieves the top 10 turns, and recall@k is the share
of the question's evidence turns (LoCoMo `dia_id`s) among them. Malformed evidence ids are
normalised (`D8:6; D9:17` → two ids, `D:11:26` → `D11:26`); ids that cannot be read are dropped and
counted.

    .venv/bin/python bench/locomo_retrieval.py              # cold: embeds every turn (~2 min here)
    .venv/bin/python bench/locomo_retrieval.py --cache bench/.cache/embed-cache.db   # reuse vectors
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import math
import re
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from _locomo_levers import CacheOnly, Mixed, Turn, context_vectors, lexical_index, window_text
from _plain_baseline import PlainBaseline
from _report import SHARED, machine, ms_stats, write_section

from tideline.analysis.cluster_routing import cluster_narratives, rebuild_clusters, route_clusters
from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import CachedEmbedder
from tideline.errors import EmbedderError
from tideline.memory import NarrativeInput, spelled_day, turn_keys, turns_window
from tideline.profile import EventDraft
from tideline.search import Hit, Key, Policy, Scope, TextIndex, retrieve

DATA = SHARED / "locomo"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_ID = re.compile(r"D:?(\d+):(\d+)")
OLD = Policy(rrf_k=10, stop_words=False, kind="turn")  # the default before issue 12
CONVEX = Policy(fusion="convex", alpha=0.5, kind="turn")
CENTRED = replace(CONVEX, centre=True)  # query centring (search/_centre.py, `search_centre=all`)
DATES = replace(CONVEX, date_weight=1.0)
#: The product's default on turns alone (the time window reads the calendar: `_events`).
DEFAULT = replace(
    DATES,
    speaker_weight=0.25,
    answer_weight=0.25,
    own_weight=0.5,
    neighbour_weight=2.0,
    reply_weight=0.4,
    number_weight=0.5,
    window=1.0,
)
#: The numbers lever off (the default before 3 Dec 2026, 08:30 UTC).
NO_NUMBERS = replace(DEFAULT, number_weight=0.0)
#: The reply lever off too (the default before 3 Dec 2026, 07:40 UTC).
NO_REPLY = replace(NO_NUMBERS, reply_weight=0.0)
#: The own-words and neighbours levers off (the default before 2 Dec 2026, 18:30 UTC).
BEFORE_TOP = replace(NO_REPLY, own_weight=0.0, neighbour_weight=0.0)
#: The answer lever off (`Policy.answer_weight`: a question turn found passes a share of its
#: score to the reply; `_answers` is the earlier form of it, a second search as a key).
NO_ANSWERS = replace(BEFORE_TOP, answer_weight=0.0)
KEYS = replace(DEFAULT, memory_weight=0.25)  # the product's default (memory keys need narratives)
#: The time-window stage's other settings (`search/_time_window.py`, `search_time_window`).
WINDOWS = {"off": 0.0, "×0.5": 0.5, "×2": 2.0, "restrict": "restrict"}
#: The context-vector lever embeds every turn a second time (in its window): `--context-vectors`.
CONTEXT_VECTORS = False
#: `--cache-only` (no embedding, so no lock: for a quick look while others embed) and `--only`.
CACHE_ONLY = False
ONLY: set[str] = set()
#: `--rows`: only the variants whose name holds one of these; `--dump`: the calibration data.
ROWS: list[str] = []
DUMP: list[dict[str, object]] | None = None
NEW = Policy(rrf_k=10, kind="turn")
BASELINE = (
    "plain FTS5 + e5 baseline (unicode61 BM25, numpy KNN, RRF k=60; bench/_plain_baseline.py)"
)
NEW_CENTRED = replace(NEW, centre=True)


def levers(base: Policy = CONVEX, dates: float = 0.0, memory: float = 0.0, **kw: object) -> Policy:
    """`base` with the turn levers set (`Policy.date_weight`, `memory_weight`, the rest)."""
    return replace(base, date_weight=dates, memory_weight=memory, **kw)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Variant:
    """One row: lexical index (`plain`, `snow`: no context; `ctx`: the product's turn index,
    with context keys ±2; `ctx1`, `ctxnodate`: ±1 with and without the date), vector index
    (`own`, `ctxvec`), mode, and the policy with its levers (`levers`)."""

    lex: str = "ctx"
    vec: str = "own"
    mode: str = "hybrid"
    policy: Policy = NEW
    route: str = ""
    answers: float = 0.0  # the answer lever's weight (#37 item 4, `_answers`)


VARIANTS: dict[str, Variant] = {
    "before: plain analyser, rrf k=10 (the old default)": Variant("plain", policy=OLD),
    "default, turns alone: convex α=0.5, context ±2, dates, speaker ×0.25, answers ×0.25, own words ×0.5, neighbours ×2, replies ×0.4, numbers ×0.5, time window ×1": Variant(
        policy=DEFAULT
    ),
    "default without the numbers lever (the default before 3 Dec 2026, 08:30)": Variant(
        policy=NO_NUMBERS
    ),
    **{
        f"default with numbers ×{w}": Variant(policy=replace(DEFAULT, number_weight=w))
        for w in (0.3, 0.7)
    },
    "default without the numbers and reply levers (the default before 3 Dec 2026, 07:40)": Variant(
        policy=NO_REPLY
    ),
    **{
        f"default with replies ×{w}": Variant(policy=replace(DEFAULT, reply_weight=w))
        for w in (0.2, 0.6)
    },
    "default without own words and neighbours (the default before 2 Dec 2026, 18:30)": Variant(
        policy=BEFORE_TOP
    ),
    "default without the neighbours lever": Variant(policy=replace(DEFAULT, neighbour_weight=0.0)),
    "default without the own-words lever": Variant(policy=replace(DEFAULT, own_weight=0.0)),
    **{
        f"default with own words ×{w}": Variant(policy=replace(DEFAULT, own_weight=w))
        for w in (0.25, 0.75)
    },
    **{
        f"default with neighbours ×{w}": Variant(policy=replace(DEFAULT, neighbour_weight=w))
        for w in (1.0, 3.0)
    },
    "default without the answer lever (the default before 2 Dec 2026, 15:00)": Variant(
        policy=NO_ANSWERS
    ),
    "default with memory keys ×0.25 ¹": Variant(policy=KEYS),
    "default without the answer lever + answers key ×0.25 (a question's search lifts the turn after it)": Variant(
        policy=NO_ANSWERS, answers=0.25
    ),
    "default without the answer lever + answers key ×0.1": Variant(policy=NO_ANSWERS, answers=0.1),
    "default without the answer lever + answers key ×0.5": Variant(policy=NO_ANSWERS, answers=0.5),
    "default with the answer lever ×0.15": Variant(policy=replace(DEFAULT, answer_weight=0.15)),
    "default with the answer lever ×0.35": Variant(policy=replace(DEFAULT, answer_weight=0.35)),
    "default with the answer lever ×0.5": Variant(policy=replace(DEFAULT, answer_weight=0.5)),
    "default with the answer lever + sessions ×0.1": Variant(
        policy=replace(DEFAULT, session_weight=0.1)
    ),
    "default with the answer lever + sessions ×0.25": Variant(
        policy=replace(DEFAULT, session_weight=0.25)
    ),
    "default with the answer lever ×0.25, question −0.25": Variant(
        policy=replace(DEFAULT, answer_weight=0.25, answer_demote=0.25)
    ),
    "default with the answer lever ×0.5, question −0.25": Variant(
        policy=replace(DEFAULT, answer_weight=0.5, answer_demote=0.25)
    ),
    "default with the answer lever ×0.25, question −0.5": Variant(
        policy=replace(DEFAULT, answer_weight=0.25, answer_demote=0.5)
    ),
    "default without the speaker lever": Variant(policy=replace(DEFAULT, speaker_weight=0.0)),
    "default with memory keys, without the speaker lever ¹": Variant(
        policy=replace(KEYS, speaker_weight=0.0)
    ),
    "default + speaker ×0.5": Variant(policy=replace(DEFAULT, speaker_weight=0.5)),
    "default + speaker ×1": Variant(policy=replace(DEFAULT, speaker_weight=1.0)),
    "default + query centring (search_centre = all)": Variant(policy=levers(CENTRED, 1.0)),
    "default + query centring, memory keys ×0.25 ¹": Variant(policy=levers(CENTRED, 1.0, 0.25)),
    "vec + query centring": Variant(mode="vec", policy=NEW_CENTRED),
    "hybrid: + context ±2, rrf k=10, + query centring": Variant(policy=NEW_CENTRED),
    "default + sessions ×0.25 (session-level list)": Variant(
        policy=levers(dates=1.0, session_weight=0.25)
    ),
    "default + sessions ×0.5": Variant(policy=levers(dates=1.0, session_weight=0.5)),
    "default + sessions ×1": Variant(policy=levers(dates=1.0, session_weight=1.0)),
    "default + diversity 2/session": Variant(policy=levers(dates=1.0, session_cap=2)),
    "default + truncation at ½ of the best": Variant(policy=levers(dates=1.0, truncate=0.5)),
    "default with memory keys + sessions ×0.5 ¹": Variant(
        policy=levers(dates=1.0, memory=0.25, session_weight=0.5)
    ),
    **{
        f"time window {name} (search_time_window)": Variant(policy=replace(DEFAULT, window=w))  # type: ignore[arg-type]
        for name, w in WINDOWS.items()
    },
    "time window ×1 without the date lever": Variant(policy=replace(DEFAULT, date_weight=0.0)),
    "time window off, memory keys ×0.25 ¹": Variant(policy=replace(KEYS, window=0.0)),
    "lex: plain (before)": Variant("plain", mode="lex", policy=OLD),
    "lex: plain + stop words": Variant("plain", mode="lex"),
    "lex: snowball": Variant("snow", mode="lex", policy=OLD),
    "lex: snowball + stop words": Variant("snow", mode="lex"),
    "lex: + context keys ±1 turn, spelled date": Variant("ctx1", mode="lex"),
    "lex: + context keys ±1, no date": Variant("ctxnodate", mode="lex"),
    "lex: + context keys ±2 (default)": Variant(mode="lex"),
    "lex: + context keys ±2 + dates": Variant(mode="lex", policy=levers(NEW, 1.0)),
    "lex: + context keys ±2 + diversity (3/session)": Variant(
        mode="lex", policy=levers(NEW, session_cap=3)
    ),
    "lex: + context keys ±2 + memory keys ×0.5 ¹": Variant(
        mode="lex", policy=levers(NEW, memory=0.5)
    ),
    "vec": Variant(mode="vec"),
    "vec: + context vectors (2nd part: the turn in its window)": Variant(vec="ctxvec", mode="vec"),
    "hybrid: snowball + stop, no context, rrf k=10": Variant("snow"),
    "hybrid: + context ±1, rrf k=10": Variant("ctx1"),
    "hybrid: + context ±2, rrf k=10": Variant(),
    "hybrid: + context ±2, rrf k=60": Variant(policy=Policy(rrf_k=60, kind="turn")),
    "hybrid: + context ±2, rrf k=10, vec ×0.5": Variant(
        policy=Policy(rrf_k=10, weights=(1.0, 0.5), kind="turn")
    ),
    "hybrid: + context ±2, convex α=0.3": Variant(policy=replace(CONVEX, alpha=0.3)),
    "hybrid: + context ±2, convex α=0.4": Variant(policy=replace(CONVEX, alpha=0.4)),
    "hybrid: + context ±2, convex α=0.5": Variant(policy=CONVEX),
    "hybrid: + context ±2, convex α=0.6": Variant(policy=replace(CONVEX, alpha=0.6)),
    "hybrid: + context ±2, convex α=0.7": Variant(policy=replace(CONVEX, alpha=0.7)),
    "hybrid: + context ±2, convex α=0.5, no keyword boost": Variant(
        policy=replace(CONVEX, boost=0.0)
    ),
    "hybrid: + context ±1, convex α=0.5": Variant("ctx1", policy=CONVEX),
    "hybrid: + context ±2 + context vectors, convex": Variant(vec="ctxvec", policy=CONVEX),
    "hybrid: convex + dates ×0.5": Variant(policy=levers(dates=0.5)),
    "hybrid: convex + dates + diversity (3/session)": Variant(
        policy=levers(dates=1.0, session_cap=3)
    ),
    "hybrid: convex + dates + diversity (5/session)": Variant(
        policy=levers(dates=1.0, session_cap=5)
    ),
    "hybrid: convex + dates + memory keys ×0.5 ¹": Variant(policy=levers(dates=1.0, memory=0.5)),
    "hybrid: convex + dates + memory keys ×1 ¹": Variant(policy=levers(dates=1.0, memory=1.0)),
    "hybrid: convex + dates + memory keys ×0.5, routed clusters + adjacent ¹": Variant(
        policy=levers(dates=1.0, memory=0.5), route="routed+adjacent"
    ),
    "hybrid: convex + dates + memory keys ×0.5, routed clusters only ¹": Variant(
        policy=levers(dates=1.0, memory=0.5), route="routed"
    ),
}


def _mean(values: Sequence[float]) -> str:
    """A cell's mean, "—" for a category the conversations asked (`--only`) have none of."""
    return f"{statistics.mean(values):.3f}" if values else "—"


def ndcg_at(got: list[str | None], gold: set[str], k: int) -> float:
    """Binary nDCG@k: each evidence turn in the top k counts 1/log2(rank + 1), over the best
    order's (every evidence turn first)."""
    dcg = sum(1.0 / math.log2(n + 2) for n, g in enumerate(got[:k]) if g in gold)
    ideal = sum(1.0 / math.log2(n + 2) for n in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def evidence_ids(raw: list[str]) -> tuple[set[str], int]:
    ids, dropped = set(), 0
    for item in raw:
        for part in re.split(r"[;,]", item.replace(" ", "")):
            if not part:
                continue
            m = _ID.fullmatch(part)
            if m:
                ids.add(f"D{int(m.group(1))}:{int(m.group(2))}")
            else:
                dropped += 1
    return ids, dropped


def _turns(app: Tideline) -> tuple[list[Turn], dict[int, str]]:
    rows = app.db.execute(
        "SELECT id, session_id, seq, ts, speaker, text, external_id FROM turns"
        " ORDER BY session_id, seq"
    ).fetchall()
    turns = [Turn(r[0], r[1], r[2], r[3], f"{r[4]}: {r[5]}" if r[4] else r[5]) for r in rows]
    return turns, {r[0]: r[6] for r in rows}


def _indexes(app: Tideline, turns: list[Turn], vectors: bool) -> dict[str, TextIndex]:
    """The product's turn index and the ablation's extra ones (see `_locomo_levers`)."""
    main = app.memory.raw.index
    rows = [(t.id, t.text) for t in turns]
    windows = {t.id: window_text(turns, n) for n, t in enumerate(turns)}
    out = {
        "ctx": main,
        "own": main,
        "plain": lexical_index(app.db, "abl_plain", rows, "plain"),
        "snow": lexical_index(app.db, "abl_snow", rows, "snowball"),
        "ctxnodate": lexical_index(app.db, "abl_ctxnd", list(windows.items()), "snowball"),
        "ctx1": lexical_index(
            app.db,
            "abl_ctx1",
            [(t.id, window_text(turns, n, 1, spelled_day(t.ts))) for n, t in enumerate(turns)],
            "snowball",
        ),
    }
    if vectors and CONTEXT_VECTORS and app.embedder is not None:
        out["ctxvec"] = context_vectors(app.db, "abl_ctxvec", main, turns, windows, app.embedder)
    return out


def _search(
    v: Variant,
    indexes: dict[str, TextIndex],
    app: Tideline,
    question: str,
    qvec: np.ndarray | None,
    k: int,
    routes: dict[str, Scope | None],
) -> list[Hit]:
    """The product's turn retrieval (`Memory._turn_retrieval`: `retrieve` with the turn keys
    and sessions), over this variant's indexes and policy, with no relevance floor."""
    memory = app.memory
    narratives = replace(memory.narrative_policy, centre=v.policy.centre)
    keys = turn_keys(
        memory.raw,
        memory.narratives,
        question,
        v.policy,
        narratives,
        memory_scope=routes.get(v.route),
    )
    if v.answers:
        keys.append(_answers(Scope(Mixed(indexes[v.lex], indexes[v.vec])), memory, v.answers))
    asked = memory.window_for(question) if v.policy.window else None
    found = retrieve(
        Scope(Mixed(indexes[v.lex], indexes[v.vec])),
        question,
        qvec,
        k,
        v.mode,  # type: ignore[arg-type]
        v.policy,
        texts=memory.raw.texts,
        keys=keys,
        groups=memory.raw.sessions_of,
        window=turns_window(memory.raw, asked, keys) if asked else None,
    )
    return found.hits[:k]


#: The turn after each turn in its session (set per conversation by `run`), for `_answers`.
NEXT: dict[int, int] = {}


def _answers(scope: Scope, memory: Any, weight: float) -> Key:
    """An ablation lever (#37 item 4): a question turn the search finds ("What's their name?")
    lifts the turn after it, where its answer is, by `weight` × the question's score."""

    def targets(ids: Sequence[int]) -> Mapping[int, Sequence[int]]:
        texts = memory.raw.texts(list(ids))
        return {i: [NEXT[i]] for i in ids if i in NEXT and texts.get(i, "").rstrip().endswith("?")}

    return Key("answers", scope, weight, targets=targets, texts=memory.raw.texts)


def _near(turns: list[Turn], ext: dict[int, str], gold: set[str]) -> set[int]:
    """The evidence turns and the turns next to them in their session: what a person reading
    a hit in its conversation finds the answer at (the calibration's "relevant")."""
    out: set[int] = set()
    for n, t in enumerate(turns):
        if ext.get(t.id) in gold:
            out |= {x.id for x in turns[max(0, n - 1) : n + 2] if x.session == t.session}
    return out


def _dump(
    app: Tideline,
    question: str,
    qvec: np.ndarray | None,
    gold: set[str],
    ext: dict[int, str],
    qid: str,
    near: set[int],
) -> None:
    """The calibration data of one question (`bench/calibrate.py`): every candidate of the
    default turn search and of the narrative search, hybrid and lexical, with its score parts,
    whether it is at the answer (`label`: evidence or next to it; a narrative: linking to such
    a turn) and whether it is evidence itself (`evidence`, for recall). A question of another
    conversation (`gold` empty) has neither."""
    assert DUMP is not None
    memory = app.memory
    links = {n.id: n.source_links for n in memory.narratives.get(memory.narratives.ids())}
    for mode in ("hybrid", "lex"):
        vector = qvec if mode == "hybrid" else None
        turns = retrieve(
            memory.raw.index,
            question,
            vector,
            10,
            mode,
            DEFAULT,  # type: ignore[arg-type]
            texts=memory.raw.texts,
            keys=turn_keys(
                memory.raw, memory.narratives, question, DEFAULT, memory.narrative_policy
            ),
        )
        narratives = retrieve(
            memory.narratives.index,
            question,
            vector,
            10,
            mode,  # type: ignore[arg-type]
            memory.narrative_policy,
            texts=memory.narratives.texts,
        )
        for kind, hits, rel, exact in (
            ("turn", turns.hits, lambda h: h.id in near, lambda h: ext.get(h.id) in gold),
            (
                "narrative",
                narratives.hits,
                lambda h: any(t in near for t in links.get(h.id, ())),
                lambda h: any(ext.get(t) in gold for t in links.get(h.id, ())),
            ),
        ):
            for rank, h in enumerate(hits, 1):
                DUMP.append(
                    {
                        "q": qid,
                        "kind": kind,
                        "mode": mode,
                        "rank": rank,
                        "fused": h.fused,
                        "cos": None if h.vec_distance is None else 1.0 - h.vec_distance,
                        "lexical": h.lexical,
                        "keyword": h.keyword_match,
                        "label": bool(rel(h)),
                        "evidence": bool(exact(h)),
                        "gold": len(gold),
                    }
                )


def _observations(app: Tideline, data: dict[str, object], ids: dict[str, int]) -> int:
    """LoCoMo's per-session observations ("Caroline attended an LGBTQ support group", D1:3) as
    narratives linked to their turns: a stand-in for what the Sleep pipeline writes."""
    memory = app.memory
    added = 0
    with memory.lock, app.db.transaction():
        for key, value in data.items():
            if not key.endswith("_observation") or not isinstance(value, dict):
                continue
            for facts in value.values():
                for fact in facts:
                    links = [ids[e] for e in evidence_ids([str(fact[1])])[0] if e in ids]
                    if links:
                        memory.narratives.insert(
                            NarrativeInput(str(fact[0]), source_links=links).validated()
                        )
                        added += 1
    memory.embed_pending()
    return added


def _events(app: Tideline, data: dict[str, object]) -> int:
    """LoCoMo's own `events_session_N` annotations ("Melanie's family takes a roadtrip to the
    Grand Canyon", on the session's date) as events of the calendar, so a question tied to one
    ("after the roadtrip") has it to read: a stand-in for what Sleep's extraction writes."""
    stores = app.profile.stores
    added = 0
    with app.db_lock, app.db.transaction():
        for key, value in data.items():
            if not key.startswith("events_session_") or not isinstance(value, dict):
                continue
            day = dt.datetime.strptime(str(value.get("date", "")), "%d %B, %Y").date()
            start, end = f"{day}T00:00:00Z", f"{day}T23:59:59Z"
            for speaker, said in value.items():
                if speaker == "date" or not isinstance(said, list):
                    continue
                for title in said:
                    words = str(title).strip()  # a title holds 200 characters, details the rest
                    if not words:
                        continue
                    draft = EventDraft(
                        words[:200], words, valid_from=start, valid_to=end, said_at=start
                    )
                    stores.events.insert(
                        draft, valid_from=start, expires_at=None, now=start, run_id=None
                    )
                    added += 1
    return added


def _routes(app: Tideline, qvec: np.ndarray | None) -> dict[str, Scope | None]:
    """Narrative scopes for the memory keys: all, or only the soft clusters routed to (with
    and without their adjacent clusters)."""
    out: dict[str, Scope | None] = {"": None}
    if qvec is None:
        return out
    index = app.memory.narratives.index
    for name, wide in (("routed+adjacent", True), ("routed", False)):
        ids = cluster_narratives(app.memory, route_clusters(app.memory, qvec, wide=wide))
        marks = ",".join(str(int(i)) for i in ids) or "0"
        out[name] = Scope(index, f"rowid IN ({marks})")
    return out


def run(cache: Path | None, k_max: int = 10, lex_only: bool = False) -> str:
    variants = {
        n: v
        for n, v in VARIANTS.items()
        if (v.mode == "lex" or not lex_only)
        and (v.vec != "ctxvec" or CONTEXT_VECTORS)
        and (not ROWS or any(r in n for r in ROWS))
    }
    recall: dict[str, dict[int, dict[int, list[float]]]] = {
        m: {c: {5: [], 10: []} for c in CATEGORIES} for m in variants
    }
    # the first hit and the order of the top 10 (#37): Hit@1 and binary nDCG@10, per variant
    firsts: dict[str, list[float]] = {m: [] for m in variants}
    ndcg: dict[str, list[float]] = {m: [] for m in variants}
    latency: list[float] = []
    embedding: list[float] = []
    end_to_end: list[float] = []
    plain_end_to_end: list[float] = []  # the plain FTS5 + e5 baseline, embedding included
    plain_recall: dict[int, dict[int, list[float]]] = {c: {5: [], 10: []} for c in CATEGORIES}
    turns_total, import_seconds, dropped, questions, narratives = 0, 0.0, 0, 0, 0
    skipped, conversations, events = 0, 0, 0
    fired: dict[int, int] = {}  # questions the time window was found in, by category
    asked: list[tuple[str, np.ndarray | None]] = []
    strangers: list[tuple[str, np.ndarray | None]] = []
    for path in sorted(DATA.glob("*.json")):
        if ONLY and path.stem not in ONLY:
            continue
        conversations += 1
        data = json.loads(path.read_text())
        with tempfile.TemporaryDirectory() as tmp:
            overrides = {
                "home": tmp,
                "cache_path": str(cache) if cache else str(Path(tmp) / "cache.db"),
                "embedder": "none" if lex_only else None,
            }
            settings = Settings.load(overrides=overrides)
            app = Tideline(
                settings,
                embedder=CachedEmbedder(CacheOnly(), settings.cache_path) if CACHE_ONLY else None,
            )
            started = time.perf_counter()
            summary = app.memory.import_file(path, "locomo")
            import_seconds += time.perf_counter() - started
            turns_total += summary.turns_added
            turns, ext = _turns(app)
            NEXT.clear()
            NEXT.update(
                (a.id, b.id) for a, b in itertools.pairwise(turns) if a.session == b.session
            )
            indexes = _indexes(app, turns, not lex_only)
            by_dia = {e: i for i, e in ext.items() if e}
            narratives += _observations(app, data, by_dia)
            events += _events(app, data)
            if not lex_only:
                rebuild_clusters(app.memory)
            print(f"{path.name}: {len(turns)} turns", flush=True)
            # The whole search as a user waits for it: the query embedded, never from the cache,
            # on a second handle on the same home (its embedder is the bare model).
            inner = getattr(app.embedder, "inner", None)
            uncached = Tideline(settings, embedder=inner) if inner and not CACHE_ONLY else None
            if uncached is not None:
                uncached.memory.search_turns("warm up the turn index", k_max)
            plain = None
            if not lex_only:
                ids, matrix = app.memory.raw.index.vectors()
                plain = PlainBaseline([(t.id, t.text) for t in turns], ids, matrix)
            for qa in data["qa"]:
                cat = qa.get("category")
                if cat not in CATEGORIES:
                    continue
                gold, bad = evidence_ids(qa.get("evidence", []))
                dropped += bad
                if not gold:
                    continue
                questions += 1
                t = time.perf_counter()
                app.memory.search_turns(qa["question"], k_max, "lex" if lex_only else "hybrid")
                latency.append(time.perf_counter() - t)
                if uncached is not None and inner is not None:
                    t = time.perf_counter()
                    inner.embed_query(qa["question"])  # the query's own embedding
                    embedding.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    uncached.memory.search_turns(qa["question"], k_max, "hybrid")
                    end_to_end.append(time.perf_counter() - t)
                    if plain is not None:
                        t = time.perf_counter()
                        plain.search(qa["question"], inner.embed_query(qa["question"]), k_max)
                        plain_end_to_end.append(time.perf_counter() - t)
                try:
                    qvec = None if lex_only else app.embedder.embed_query(qa["question"])  # type: ignore[union-attr]
                except EmbedderError:
                    skipped, questions = skipped + 1, questions - 1  # --cache-only: not cached
                    continue
                routes = _routes(app, qvec)
                if app.memory.window_for(qa["question"]) is not None:
                    fired[cat] = fired.get(cat, 0) + 1
                if plain is not None and qvec is not None:
                    got = [ext.get(i) for i in plain.search(qa["question"], qvec, k_max)]
                    for k in (5, 10):
                        plain_recall[cat][k].append(len(gold & set(got[:k])) / len(gold))
                if DUMP is not None:
                    near = _near(turns, ext, gold)
                    _dump(app, qa["question"], qvec, gold, ext, f"{path.stem}:{questions}", near)
                    asked.append((qa["question"], qvec))
                for name, v in variants.items():
                    hits = _search(v, indexes, app, qa["question"], qvec, k_max, routes)
                    got = [ext.get(h.id) for h in hits]
                    for k in (5, 10):
                        recall[name][cat][k].append(len(gold & set(got[:k])) / len(gold))
                    firsts[name].append(float(bool(got) and got[0] in gold))
                    ndcg[name].append(ndcg_at(got, gold, 10))
            if (
                DUMP is not None
            ):  # the last conversation's questions, asked here: nothing is relevant
                for n, (question, vector) in enumerate(strangers):
                    _dump(app, question, vector, set(), ext, f"stranger:{path.stem}:{n}", set())
                strangers, asked = asked, []
            app.close()
            if uncached is not None:
                uncached.close()
            if plain is not None:
                plain.close()
    header = (
        "| variant | "
        + " | ".join(f"{CATEGORIES[c]} @5 / @10" for c in CATEGORIES)
        + " | overall @5 | overall @10 | Hit@1 | nDCG@10 |"
    )
    rows = [header, "|---|" + "---:|" * (len(CATEGORIES) + 4)]
    for name in variants:
        cells = [f"{_mean(recall[name][c][5])} / {_mean(recall[name][c][10])}" for c in CATEGORIES]
        all5 = [v for c in CATEGORIES for v in recall[name][c][5]]
        all10 = [v for c in CATEGORIES for v in recall[name][c][10]]
        rows.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {statistics.mean(all5):.3f} | {statistics.mean(all10):.3f}"
            + f" | {statistics.mean(firsts[name]):.3f} | {statistics.mean(ndcg[name]):.3f} |"
        )
    if plain_recall[1][5]:
        cells = [f"{_mean(plain_recall[c][5])} / {_mean(plain_recall[c][10])}" for c in CATEGORIES]
        all5 = [v for c in CATEGORIES for v in plain_recall[c][5]]
        all10 = [v for c in CATEGORIES for v in plain_recall[c][10]]
        rows.append(
            f"| {BASELINE} | "
            + " | ".join(cells)
            + f" | {statistics.mean(all5):.3f} | {statistics.mean(all10):.3f} | | |"
        )
    p50, p95 = ms_stats(latency)
    total = [a + b for a, b in zip(latency, embedding, strict=False)] or latency
    t50, t95 = ms_stats(total)
    e50, e95 = ms_stats(end_to_end or latency)
    baseline = ""
    if plain_end_to_end:
        b50, b95 = ms_stats(plain_end_to_end)
        ratio = float(e95) / float(b95) if float(b95) else 0.0
        baseline = (
            f" Measured in the same run, one question after the other, the {BASELINE} end to end "
            f"(its query embedded uncached too): p50 {b50} ms, p95 {b95} ms; the product's p95 is "
            f"{ratio:.2f}× the baseline's."
        )
    cache_note = (
        f"embedding cache {cache} (vectors may be reused)"
        if cache
        else "a fresh embedding cache (every turn embedded)"
    )
    return "\n".join(
        [
            "## LoCoMo turn retrieval (bench/locomo_retrieval.py)",
            "",
            f"Machine: {machine()}.",
            f"{conversations} conversations, {turns_total:,} turns, {questions} questions of categories 1–4 "
            f"({dropped} unreadable evidence ids dropped; {skipped} skipped, not cached). Import with {cache_note}: "
            f"{import_seconds:.1f} s, {turns_total / import_seconds:.1f} turns/s including embedding.",
            "",
            "Evidence recall (share of a question's evidence turns in the top k), mean over questions;"
            " Hit@1: the share of questions whose first hit is an evidence turn; nDCG@10: binary,"
            " each evidence turn in the top 10 by 1/log2(rank + 1) over the best order's."
            " Each row switches one lever against the row it names (bench/_locomo_levers.py):",
            "",
            *rows,
            "",
            f"¹ with LoCoMo's {narratives:,} session observations stored as narratives linked to "
            "their turns (a stand-in for what the Sleep pipeline writes); every other row searches "
            "the turns alone.",
            "",
            f"The calendar holds LoCoMo's {events:,} session events (`events_session_N`); "
            f"a time window was found in {sum(fired.values())} of {questions} questions ("
            + ", ".join(f"{CATEGORIES[c]} {fired.get(c, 0)}" for c in CATEGORIES)
            + "): the time-window rows differ from the default only there.",
            "",
            f"Turn search with default settings (`Memory.search_turns`, {len(latency)} questions): "
            f"search alone (query vector from the cache) p50 {p50} ms, p95 {p95} ms; with the "
            f"query's own e5 embedding (timed uncached, added per question) p50 {t50} ms, "
            f"p95 {t95} ms; **end to end** (the search given the query text, embedded uncached "
            f"on the query thread while the lexical lists are searched) p50 {e50} ms, "
            f"p95 {e95} ms.{baseline}",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="reuse this embedding cache")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--lex-only", action="store_true", help="lexical rows only, no embedder")
    ap.add_argument("--cache-only", action="store_true", help="embed nothing (see CacheOnly)")
    ap.add_argument("--only", nargs="*", default=[], help="conversations, e.g. conv-26")
    ap.add_argument(
        "--context-vectors", action="store_true", help="embed every turn in its window too"
    )
    ap.add_argument("--rows", nargs="*", default=[], help="only variants whose name holds one")
    ap.add_argument("--dump", type=Path, default=None, help="write calibration data here")
    args = ap.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"LoCoMo data not found at {DATA}")
    global CONTEXT_VECTORS, CACHE_ONLY, ONLY, ROWS, DUMP
    CONTEXT_VECTORS, CACHE_ONLY, ONLY = args.context_vectors, args.cache_only, set(args.only)
    ROWS, DUMP = args.rows, [] if args.dump else None
    body = run(args.cache, lex_only=args.lex_only)
    if args.dump and DUMP is not None:
        args.dump.write_text("".join(json.dumps(d) + "\n" for d in DUMP), encoding="utf-8")
    print(body)
    if not args.no_write:
        write_section("locomo-retrieval", body)


if __name__ == "__main__":
    main()
