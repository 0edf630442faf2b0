"""The same search on SQLite and on PostgreSQL: one score must mean the same on both engines.

    TIDELINE_SHARED_DATA=/work/shared/data .venv/bin/python bench/engine_parity.py \
        [--conversation conv-26] [--query "painting a sunset"] [--cache /work/cache/locomo-embed.db]

Writes a LoCoMo conversation's session observations as memories (as
`tests/analysis/test_locomo_scripts.py` does) into a fresh SQLite home and into a namespace of a
throwaway PostgreSQL (the `pgserver` wheel), embeds them with the bundled e5 and prints the
scores of `Memory.search` on each (docs/benchmarks-history.md, *Search you can trust*).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import warnings
from pathlib import Path

from _report import SHARED

from tideline.app import Tideline, memory_policies
from tideline.clock import system_clock
from tideline.config import DEFAULTS, Settings
from tideline.embed import E5Embedder
from tideline.memory import Memory


def observations(name: str) -> tuple[list[str], list[str]]:
    data = json.loads((SHARED / "locomo" / f"{name}.json").read_text(encoding="utf-8"))
    docs = [
        text
        for key, by_speaker in data.items()
        if re.fullmatch(r"session_\d+_observation", key)
        for facts in by_speaker.values()
        for text, _ in facts
    ]
    return docs, [data["speaker_a"], data["speaker_b"]]


def search(settings: Settings, e5: E5Embedder, docs: list[str], speakers: list[str], query: str):
    app = Tideline(settings, embedder=e5)
    try:
        # write fast, then embed in batches
        lexical = Memory(app.db, None, **memory_policies(DEFAULTS), clock=system_clock)
        for text in docs:
            speaker = next((s for s in speakers if s in text), speakers[0])
            lexical.write(gesture=text[:500], tags=[speaker], entities_role=f"{speaker}=speaker")
        app.memory.embed_pending()
        return [(h.id, h.score) for h in app.memory.search(query, k=5).hits]
    finally:
        app.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--query", default="painting a sunset")
    ap.add_argument("--cache", type=Path, default=None, help="reuse this embedding cache")
    args = ap.parse_args()
    import pgserver

    docs, speakers = observations(args.conversation)
    e5 = E5Embedder()
    with tempfile.TemporaryDirectory(prefix="parity-") as tmp:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            server = pgserver.get_server(Path(tmp) / "pg", "delete")
        try:
            found = {}
            for engine in ("sqlite", "postgresql"):
                overrides = {"home": str(Path(tmp) / engine)}
                if args.cache:
                    overrides["cache_path"] = str(args.cache)
                if engine == "postgresql":
                    os.environ["TIDELINE_DATABASE_URL"] = server.get_uri()
                    os.environ["TIDELINE_DATABASE_USER"] = "parity"
                found[engine] = search(
                    Settings.load(overrides=overrides), e5, docs, speakers, args.query
                )
                scores = ", ".join(f"{s:.3f}" for _, s in found[engine])
                print(f"{engine}: {len(found[engine])} hits above the floor: {scores}", flush=True)
            same = [i for i, _ in found["sqlite"]] == [i for i, _ in found["postgresql"]]
            print("same memories in the same order" if same else "the orders differ")
        finally:
            server.cleanup()


if __name__ == "__main__":
    main()
