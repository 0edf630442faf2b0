"""Regenerate the per-language mean query vectors that query centring subtracts
(`src/tideline/search/reference/means.json`) from the shipped reference questions, with the
bundled e5 model. Run it after editing `reference/queries.json` or changing the bundled model;
`tests/search/test_centre.py` checks that the file matches the model.

    flock /work/embed.lock .venv/bin/python scripts/reference_means.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tideline.embed import E5Embedder
from tideline.search._centre import MEANS, REFERENCE, queries_digest, reference_queries

OUT = Path(__file__).resolve().parents[1] / "src" / "tideline" / "search" / REFERENCE / MEANS

#: Places kept per component: the file stays small and the mean moves < 1e-6.
PLACES = 6


def main() -> None:
    embedder = E5Embedder()
    queries = reference_queries()
    means = {}
    for lang, texts in queries.items():
        vectors = np.vstack([embedder.embed_query(t) for t in texts])
        means[lang] = [round(float(x), PLACES) for x in vectors.mean(axis=0)]
        print(f"{lang}: {len(texts)} questions", flush=True)
    out = {
        "model_id": embedder.model_id,
        "queries": queries_digest(queries),
        "means": means,
    }
    OUT.write_text(json.dumps(out, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
