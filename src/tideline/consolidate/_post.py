"""After the transaction (seed: "事务后处理"): facts made searchable, and their themes.

Both are non-critical and derived: a failure is recorded in the run's report, never raised, and
the next run does what is missing (facts not yet indexed or embedded are found again).

Themes: k-means (scikit-learn) over the vectors of the live facts, k = √(n/2) clamped to 2–8;
each theme is labelled with its most common category and the fact nearest its centre.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from tideline.embed import Embedder
from tideline.profile import ACTIVE_STATUSES, Profile
from tideline.runs import Outcome

MIN_FACTS = 4  # fewer embedded facts than this: no themes
MAX_THEMES = 8


def index_facts(profile: Profile, embedder: Embedder | None) -> Outcome:
    done = profile.index_facts(embedder)
    note = "lexical only: no embedder" if embedder is None else done.pop("error", "")
    return Outcome({k: v for k, v in done.items() if isinstance(v, int)}, note)


def themes(profile: Profile) -> Outcome:
    facts = {f.id: f for f in profile.facts(status=list(ACTIVE_STATUSES), evidence=False)}
    vectors = profile.fact_vectors(sorted(facts))
    if len(vectors) < MIN_FACTS:
        return Outcome(
            note=f"{len(vectors)} embedded live fact(s); themes need {MIN_FACTS}", status="skipped"
        )
    from sklearn.cluster import KMeans

    ids = sorted(vectors)
    matrix = np.stack([vectors[i] for i in ids])
    k = max(2, min(MAX_THEMES, round(math.sqrt(len(ids) / 2))))
    model = KMeans(n_clusters=k, n_init=4, random_state=0).fit(matrix)
    found = []
    for c in range(k):
        members = [i for i, label in zip(ids, model.labels_, strict=True) if label == c]
        if not members:
            continue
        centre = model.cluster_centers_[c]
        nearest = min(members, key=lambda i: float(np.linalg.norm(vectors[i] - centre)))
        category = Counter(facts[i].category for i in members).most_common(1)[0][0]
        found.append((f"{category}: {facts[nearest].value}"[:200], members))
    profile.set_themes(found)
    return Outcome({"themes": len(found), "facts": len(ids)})
