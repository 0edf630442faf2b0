"""A one-minute demo of the search core on the bundled sample notes (no network).

Indexes the sections of examples/sample/*.md into a throwaway database with the bundled e5
embedder, then answers a few questions in English, Russian and Chinese.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tideline.app import embedder_from
from tideline.config import Settings
from tideline.search import TextIndex
from tideline.store import open_database

SAMPLE = Path(__file__).parent / "sample"
QUESTIONS = [
    "how do I restore the database",
    "pg_restore",
    "как поливать кактус",
    "东京坐火车用什么卡",
]


def main() -> None:
    sections: list[str] = []
    for path in sorted(SAMPLE.glob("*.md")):
        sections += [s.strip() for s in path.read_text().split("\n## ")[1:]]
    with tempfile.TemporaryDirectory() as tmp:
        embedder = embedder_from(Settings.load(overrides={"home": tmp}))
        db = open_database(Path(tmp) / "demo.db")
        index = TextIndex(db, "demo")
        index.upsert_many(list(enumerate(sections, 1)))
        index.bind_vectors(embedder.model_id, embedder.dim)
        index.fill_vectors(embedder, list(enumerate(sections, 1)))
        for question in QUESTIONS:
            hit = index.search(question, embedder.embed_query(question), k=1)[0]
            print(
                f"{question!r:45} -> {sections[hit.id - 1].splitlines()[0]}  (score {hit.score:.4f})"
            )
        db.close()


if __name__ == "__main__":
    main()
