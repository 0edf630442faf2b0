"""Sleep extraction on LoCoMo: facts scored against LoCoMo's own per-session observations.

Each LoCoMo session (`session_N`, its turns tagged with `dia_id`s) is imported into a fresh agent
one at a time, in order, and a full sleep runs after each, as a nightly sleep would. What the
sleep produced from that session — its observations and the facts it created or supported — is
compared with `session_N_observation` (reference facts, each tagged with the dia_ids it rests on):

- embedding match: cosine similarity of the bundled e5 vectors ≥ THRESHOLD (stated below);
  precision = share of produced items that match some reference item, recall = share of reference
  items matched by some produced item;
- evidence match: the same, but a match means sharing at least one evidence turn (dia_id);
- evidence-link accuracy: of the produced items matched by embedding, the share whose evidence
  turns include one of their best reference item's dia_ids;
- tokens (prompt + completion) and seconds per session.

And time (#24): each session is slept on the night after it, in the conversation's own time (the
app's clock is a `ManualClock` set to the session's date + 12 h, so a year replays as it would
have been lived):

- facts in session: of the facts a sleep created, the share whose `valid_from` falls in the
  session of their earliest evidence turn (between its first and last turn's time);
- events against LoCoMo's `events_session_N` (each dated by its session): a produced event and a
  reference event are the same when their e5 cosine ≥ EVENT_THRESHOLD; a match is dated right
  when the produced date range contains the reference day (strict), or overlaps the week
  before it through that day (week: people tell last weekend's camping at Tuesday's session,
  and LoCoMo dates it Tuesday). Precision: produced events matched and dated right / produced;
  recall: reference events matched and dated right / reference.

It needs an OpenAI-compatible endpoint: TIDELINE_LLM_BASE_URL, TIDELINE_LLM_MODEL, ... or the
flags `--base-url` and `--model` (any endpoint: a llama.cpp server, ollama, a hosted API):

    .venv/bin/python bench/sleep_extraction.py --base-url http://127.0.0.1:11434/v1 \
        --model qwen2.5:7b --sessions 3 --write
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))  # tests.llama_server (--small-model)
from _report import SHARED, machine, write_section
from locomo_retrieval import evidence_ids

from tests.llama_server import llama_server
from tideline.app import Tideline
from tideline.clock import ManualClock
from tideline.config import Settings
from tideline.embed import E5Embedder, Embedder
from tideline.memory.importers.locomo import parse_locomo_time

THRESHOLD = 0.88  # e5-small cosine; unrelated sentences of one conversation score ~0.75–0.85
EVENT_THRESHOLD = 0.85  # events are short and differently worded ("went camping" ~ "camps")
WEEK = dt.timedelta(days=7)
NIGHT = dt.timedelta(hours=12)  # the sleep runs the night after the session
DATA = SHARED / "locomo"


@dataclass
class Item:
    text: str
    dia_ids: set[str]


@dataclass
class Tally:
    produced: int = 0
    reference: int = 0
    emb_precise: int = 0
    emb_recalled: int = 0
    ev_precise: int = 0
    ev_recalled: int = 0
    linked: int = 0
    link_ok: int = 0
    tokens: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    facts_new: int = 0
    facts_in_session: int = 0
    events_produced: int = 0
    events_reference: int = 0
    events_precise: int = 0  # produced, matched and dated right (strict)
    events_recalled: int = 0
    events_precise_week: int = 0
    events_recalled_week: int = 0

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)

    def summary(self) -> dict[str, Any]:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 3) if b else None

        return {
            "sessions": len(self.seconds),
            "produced": self.produced,
            "reference": self.reference,
            "precision_embedding": ratio(self.emb_precise, self.produced),
            "recall_embedding": ratio(self.emb_recalled, self.reference),
            "precision_evidence": ratio(self.ev_precise, self.produced),
            "recall_evidence": ratio(self.ev_recalled, self.reference),
            "evidence_link_accuracy": ratio(self.link_ok, self.linked),
            "facts_in_session": ratio(self.facts_in_session, self.facts_new),
            "events_produced": self.events_produced,
            "events_reference": self.events_reference,
            "event_date_precision": ratio(self.events_precise, self.events_produced),
            "event_date_recall": ratio(self.events_recalled, self.events_reference),
            "event_date_precision_week": ratio(self.events_precise_week, self.events_produced),
            "event_date_recall_week": ratio(self.events_recalled_week, self.events_reference),
            "tokens_per_session": round(statistics.mean(self.tokens), 1) if self.tokens else None,
            "seconds_per_session": round(statistics.mean(self.seconds), 2)
            if self.seconds
            else None,
        }


def reference(conv: dict[str, Any], n: int) -> list[Item]:
    out = []
    for facts in (conv.get(f"session_{n}_observation") or {}).values():
        for text, ids in facts:
            raw = ids if isinstance(ids, list) else [ids]
            out.append(Item(text, evidence_ids([str(i) for i in raw])[0]))
    return out


def similarity(
    produced: Sequence[Item | Dated], gold: Sequence[Item | Dated], embedder: Embedder
) -> np.ndarray:
    """Cosine of every produced text against every reference text (bundled e5)."""
    a = np.asarray(embedder.embed_documents([p.text for p in produced]), dtype=np.float32)
    b = np.asarray(embedder.embed_documents([g.text for g in gold]), dtype=np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return a @ b.T


def score(produced: Sequence[Item], gold: Sequence[Item], embedder: Embedder) -> Tally:
    t = Tally(produced=len(produced), reference=len(gold))
    if not produced or not gold:
        return t
    sim = similarity(produced, gold, embedder)
    match = sim >= THRESHOLD
    share = np.array([[bool(p.dia_ids & g.dia_ids) for g in gold] for p in produced])
    t.emb_precise, t.emb_recalled = int(match.any(1).sum()), int(match.any(0).sum())
    t.ev_precise, t.ev_recalled = int(share.any(1).sum()), int(share.any(0).sum())
    for i, p in enumerate(produced):
        if match[i].any():
            t.linked += 1
            t.link_ok += bool(p.dia_ids & gold[int(sim[i].argmax())].dia_ids)
    return t


@dataclass
class Dated:
    text: str
    first: dt.date
    last: dt.date


def reference_events(conv: dict[str, Any], n: int) -> list[Dated]:
    """LoCoMo's `events_session_N`: each speaker's events, dated by the session's `date`."""
    found = conv.get(f"events_session_{n}") or {}
    day = dt.datetime.strptime(str(found.get("date", "")).strip(), "%d %B, %Y").date()
    return [
        Dated(text, day, day)
        for speaker, texts in found.items()
        if speaker != "date" and isinstance(texts, list)
        for text in texts
    ]


def score_events(produced: Sequence[Dated], gold: Sequence[Dated], embedder: Embedder) -> Tally:
    t = Tally(events_produced=len(produced), events_reference=len(gold))
    if not produced or not gold:
        return t
    same = similarity(produced, gold, embedder) >= EVENT_THRESHOLD
    strict = np.array([[p.first <= g.first <= p.last for g in gold] for p in produced])
    week = np.array(
        [[p.first <= g.last and p.last >= g.first - WEEK for g in gold] for p in produced]
    )
    t.events_precise, t.events_recalled = (
        int((same & strict).any(1).sum()),
        int((same & strict).any(0).sum()),
    )
    t.events_precise_week = int((same & week).any(1).sum())
    t.events_recalled_week = int((same & week).any(0).sum())
    return t


def facts_in_session(app: Tideline, before: set[int]) -> tuple[int, int]:
    """(facts this run created, those valid from within the session of their first evidence)."""
    new = [f for f in app.profile.facts() if f.id not in before]
    turns = {t for f in new for e in f.evidence if e.turn_id for t in [e.turn_id]}
    by_id = {t.id: t for t in app.memory.raw.get(sorted(turns))}
    inside = 0
    for f in new:
        cited = [by_id[e.turn_id] for e in f.evidence if e.turn_id in by_id]
        if not cited:
            continue
        first = min(cited, key=lambda t: t.ts)
        said = [t.ts for t in app.memory.session_turns(first.session)]
        inside += min(said) <= f.valid_from <= max(said)
    return len(new), inside


def session_numbers(conv: dict[str, Any]) -> list[int]:
    keys = (k.split("_")[1] for k in conv if k.startswith("session_") and k.count("_") == 1)
    return sorted(int(k) for k in keys)


def produced_by(app: Tideline, run_id: int, dia: dict[int, str]) -> list[Item]:
    """Observations and facts (created or supported) the run made, with their dia_ids."""
    items = [
        Item(o.text, {dia[t] for t in o.turn_ids if t in dia})
        for o in app.profile.observations()
        if o.run_id == run_id
    ]
    for f in app.profile.facts():
        turns = {dia[e.turn_id] for e in f.evidence if e.turn_id in dia}
        if turns:
            who = "" if f.subject == "user" else f"{f.subject}: "
            items.append(Item(f"{who}{f.category}: {f.value}", turns))
    return items


def run_conversation(
    path: Path, settings: Settings, embedder: Embedder, sessions: int | None
) -> Tally:
    conv = json.loads(path.read_text())
    total = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        s = Settings.load(overrides={**_llm(settings), "home": tmp, "embedder": "none"})
        clock = ManualClock(dt.datetime(2000, 1, 1, tzinfo=dt.UTC))
        app = Tideline(s, clock=clock)
        try:
            for n in session_numbers(conv)[:sessions]:
                one = {k: conv[k] for k in ("speaker_a", "speaker_b")}
                one |= {f"session_{n}": conv[f"session_{n}"]}
                one |= {f"session_{n}_date_time": conv[f"session_{n}_date_time"]}
                file = Path(tmp) / f"{path.stem}.json"
                file.write_text(json.dumps(one))
                app.memory.import_file(file, "locomo")
                clock.set(parse_locomo_time(conv[f"session_{n}_date_time"]) + NIGHT)
                before = {f.id for f in app.profile.facts(evidence=False)}
                events_before = {e.id for e in app.profile.events(active=None)}
                started = time.perf_counter()
                report = app.sleep.run()
                if not report.ok:
                    raise SystemExit(f"{path.stem} session {n}: " + "; ".join(report.errors))
                turns = app.memory.session_turns(f"locomo/{path.stem}/session_{n}")
                dia = {t.id: t.external_id or "" for t in turns}
                assert report.run_id is not None
                tally = score(produced_by(app, report.run_id, dia), reference(conv, n), embedder)
                tally.facts_new, tally.facts_in_session = facts_in_session(app, before)
                made = [
                    Dated(
                        f"{e.title} {e.details}".strip(),
                        _day(e.valid_from),
                        _day(e.valid_to or e.valid_from),
                    )
                    for e in app.profile.events(active=None)
                    if e.id not in events_before
                ]
                tally.add(score_events(made, reference_events(conv, n), embedder))
                tally.seconds = [time.perf_counter() - started]
                tally.tokens = [int(report.tokens.get("total_tokens") or 0)]
                total.add(tally)
        finally:
            app.close()
    return total


def _day(stamp: str) -> dt.date:
    return dt.date.fromisoformat(stamp[:10])


def _llm(settings: Settings) -> dict[str, Any]:
    return {k: v for k, v in vars(settings).items() if k.startswith("llm_")}


def run(
    settings: Settings,
    *,
    data: Path = DATA,
    conversations: int | None = None,
    sessions: int | None = None,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    if not settings.llm_base_url:
        raise SystemExit("set TIDELINE_LLM_BASE_URL and TIDELINE_LLM_MODEL (see docs/llm.md)")
    embedder = embedder or E5Embedder()
    per_conv = {}
    total = Tally()
    for path in sorted(data.glob("*.json"))[:conversations]:
        tally = run_conversation(path, settings, embedder, sessions)
        per_conv[path.stem] = tally.summary()
        total.add(tally)
    return {"model": settings.llm_model, "threshold": THRESHOLD, "total": total.summary(),
            "conversations": per_conv}  # fmt: skip


EXTRACTION = ["sessions", "produced", "reference", "precision_embedding", "recall_embedding",
              "precision_evidence", "recall_evidence", "evidence_link_accuracy",
              "tokens_per_session", "seconds_per_session"]  # fmt: skip
TIME = ["facts_in_session", "events_produced", "events_reference", "event_date_precision",
        "event_date_recall", "event_date_precision_week", "event_date_recall_week"]  # fmt: skip


def table(result: dict[str, Any], cols: Sequence[str] = EXTRACTION) -> str:
    head = "| conversation | " + " | ".join(cols) + " |\n|---|" + "---:|" * len(cols)
    rows = [
        f"| {name} | " + " | ".join("—" if r[c] is None else str(r[c]) for c in cols) + " |"
        for name, r in [*result["conversations"].items(), ("all", result["total"])]
    ]
    return "\n".join([head, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=None, help="first N conversations")
    parser.add_argument("--sessions", type=int, default=None, help="first N sessions of each")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: settings)")
    parser.add_argument("--model", help="the model to ask there (default: settings)")
    parser.add_argument(
        "--small-model",
        action="store_true",
        help="a plumbing check: start llama.cpp's server with SmolLM2-135M (`make test-llm`)",
    )
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks-history.md")
    args = parser.parse_args()
    endpoint = {"llm_base_url": args.base_url, "llm_model": args.model}
    if args.small_model:
        with tempfile.TemporaryDirectory() as tmp, llama_server(Path(tmp) / "server.log") as srv:
            small = {"llm_base_url": srv.url, "llm_model": srv.model, "llm_timeout": 600.0}
            result = run(
                Settings.load(overrides=small),
                conversations=args.conversations,
                sessions=args.sessions,
            )
    else:
        settings = Settings.load(overrides={k: v for k, v in endpoint.items() if v})
        result = run(settings, conversations=args.conversations, sessions=args.sessions)
    title = "Sleep extraction on LoCoMo (bench/sleep_extraction.py)"
    if args.small_model:
        title += ", a plumbing check with SmolLM2-135M"
    body = (
        f"## {title}\n\n"
        f"Machine: {machine()}. Model: `{result['model']}`. Embedding match: bundled e5 cosine ≥ "
        f"{result['threshold']}.\n\n{table(result)}\n\n"
        f"Time (each session slept on the night after it, in the conversation's own time; event "
        f"match: e5 cosine ≥ {EVENT_THRESHOLD}):\n\n{table(result, TIME)}\n"
    )
    print(body)
    if args.write:
        write_section("sleep-extraction-small" if args.small_model else "sleep-extraction", body)


if __name__ == "__main__":
    main()
