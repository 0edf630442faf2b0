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

It needs an OpenAI-compatible endpoint (TIDELINE_LLM_BASE_URL, TIDELINE_LLM_MODEL, ...):

    TIDELINE_LLM_BASE_URL=http://127.0.0.1:11434/v1 TIDELINE_LLM_MODEL=qwen2.5:7b \
        .venv/bin/python bench/sleep_extraction.py --sessions 3 --write
"""

from __future__ import annotations

import argparse
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
from _report import machine, write_section
from locomo_retrieval import evidence_ids

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import E5Embedder, Embedder

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
THRESHOLD = 0.88  # e5-small cosine; unrelated sentences of one conversation score ~0.75–0.85


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


def score(produced: Sequence[Item], gold: Sequence[Item], embedder: Embedder) -> Tally:
    t = Tally(produced=len(produced), reference=len(gold))
    if not produced or not gold:
        return t
    a = np.asarray(embedder.embed_documents([p.text for p in produced]), dtype=np.float32)
    b = np.asarray(embedder.embed_documents([g.text for g in gold]), dtype=np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    sim = a @ b.T
    match = sim >= THRESHOLD
    share = np.array([[bool(p.dia_ids & g.dia_ids) for g in gold] for p in produced])
    t.emb_precise, t.emb_recalled = int(match.any(1).sum()), int(match.any(0).sum())
    t.ev_precise, t.ev_recalled = int(share.any(1).sum()), int(share.any(0).sum())
    for i, p in enumerate(produced):
        if match[i].any():
            t.linked += 1
            t.link_ok += bool(p.dia_ids & gold[int(sim[i].argmax())].dia_ids)
    return t


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
        app = Tideline(s)
        try:
            for n in session_numbers(conv)[:sessions]:
                one = {k: conv[k] for k in ("speaker_a", "speaker_b")}
                one |= {f"session_{n}": conv[f"session_{n}"]}
                one |= {f"session_{n}_date_time": conv[f"session_{n}_date_time"]}
                file = Path(tmp) / f"{path.stem}.json"
                file.write_text(json.dumps(one))
                app.memory.import_file(file, "locomo")
                started = time.perf_counter()
                report = app.sleep.run()
                if not report.ok:
                    raise SystemExit(f"{path.stem} session {n}: " + "; ".join(report.errors))
                turns = app.memory.session_turns(f"locomo/{path.stem}/session_{n}")
                dia = {t.id: t.external_id or "" for t in turns}
                assert report.run_id is not None
                tally = score(produced_by(app, report.run_id, dia), reference(conv, n), embedder)
                tally.seconds = [time.perf_counter() - started]
                tally.tokens = [int(report.tokens.get("total_tokens") or 0)]
                total.add(tally)
        finally:
            app.close()
    return total


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


def table(result: dict[str, Any]) -> str:
    cols = ["sessions", "produced", "reference", "precision_embedding", "recall_embedding",
            "precision_evidence", "recall_evidence", "evidence_link_accuracy",
            "tokens_per_session", "seconds_per_session"]  # fmt: skip
    head = "| conversation | " + " | ".join(cols) + " |\n|---|" + "---:|" * len(cols)
    rows = [
        f"| {name} | " + " | ".join(str(r[c]) for c in cols) + " |"
        for name, r in [*result["conversations"].items(), ("all", result["total"])]
    ]
    return "\n".join([head, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=None, help="first N conversations")
    parser.add_argument("--sessions", type=int, default=None, help="first N sessions of each")
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    args = parser.parse_args()
    result = run(Settings.load(), conversations=args.conversations, sessions=args.sessions)
    body = (
        "## Sleep extraction on LoCoMo (bench/sleep_extraction.py)\n\n"
        f"Machine: {machine()}. Model: `{result['model']}`. Embedding match: bundled e5 cosine ≥ "
        f"{result['threshold']}.\n\n{table(result)}\n"
    )
    print(body)
    if args.write:
        write_section("sleep-extraction", body)


if __name__ == "__main__":
    main()
