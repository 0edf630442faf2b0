"""Query centring (`search/_centre.py`): the shipped means belong to the shipped questions and the
bundled model; a query is centred by its own language; centring changes the ranking of the
vector list, never the distance a hit reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources

import numpy as np
import pytest

from tideline.app import Tideline, library_options
from tideline.config import Settings
from tideline.embed import Embedder
from tideline.errors import ConfigError
from tideline.search import Policy, open_index, retrieve
from tideline.search._centre import (
    MEANS,
    REFERENCE,
    SHARE,
    centre_query,
    queries_digest,
    reference_means,
    reference_queries,
)
from tideline.store import Storage

#: Questions that are not in the reference set, one per language.
UNSEEN = {
    "en": "Where did we park the car last night?",
    "ru": "Где мы оставили машину вчера вечером?",
    "zh": "我们昨晚把车停在哪里了？",
    "de": "Wo haben wir gestern Abend das Auto geparkt?",
    "fr": "Où avons-nous garé la voiture hier soir ?",
    "es": "¿Dónde aparcamos el coche anoche?",
    "ja": "昨日の夜、車をどこに停めましたか？",
}


def test_the_shipped_means_are_the_shipped_questions_embedded_by_the_bundled_model(
    e5: Embedder,
) -> None:
    queries = reference_queries()
    shipped = json.loads(
        (resources.files("tideline.search") / REFERENCE / MEANS).read_text("utf-8")
    )
    # stale after an edit of queries.json: run scripts/reference_means.py
    assert shipped["queries"] == queries_digest(queries)
    ref = reference_means()[e5.model_id]
    assert ref.languages == tuple(queries)
    assert all(len(texts) >= 40 for texts in queries.values())
    for lang in ("ru", "ja"):  # two languages embedded again, a sentence at a time
        again = np.vstack([e5.embed_query(t) for t in queries[lang]]).mean(axis=0)
        assert np.abs(again - ref.means[ref.languages.index(lang)]).max() < 1e-3


def test_a_question_is_centred_by_the_mean_of_its_own_language(e5: Embedder) -> None:
    ref = reference_means()[e5.model_id]
    for lang, text in UNSEEN.items():
        qvec = e5.embed_query(text)
        assert ref.languages[ref.language(qvec)] == lang, text
        centred = centre_query(qvec, e5.model_id)
        mean = SHARE * ref.means[ref.languages.index(lang)]
        expected = (qvec - mean) / np.linalg.norm(qvec - mean)
        assert np.allclose(centred, expected, atol=1e-6)
        assert float(centred @ qvec) < 0.9  # the shared direction is gone


def test_another_model_is_not_centred() -> None:
    qvec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    assert centre_query(qvec, "some/other-model") is qvec
    assert centre_query(qvec, None) is qvec


@pytest.mark.engines
def test_centring_ranks_by_the_centred_query_and_reports_the_raw_distance(
    new_storage: Callable[[], Storage], e5: Embedder
) -> None:
    docs = {
        1: "Check the spelling of a text file",
        2: "Display the version",
        3: "Merge two branches of a repository",
        4: "Show help for a command",
        5: "Копирует файлы на удалённый сервер",
    }
    idx = open_index(new_storage(), "docs")
    idx.upsert_many(list(docs.items()))
    idx.bind_vectors(e5.model_id, e5.dim)
    keys = e5.embed_documents(list(docs.values()))
    idx.set_vectors(zip(docs, keys, strict=True))
    query = "Проверка орфографии."
    qvec = e5.embed_query(query)
    centred = centre_query(qvec, e5.model_id)
    for policy in (Policy(centre=True), Policy(fusion="convex", centre=True)):
        found = retrieve(idx, query, qvec, 5, "vec" if policy.fusion == "rrf" else "hybrid", policy)
        if policy.fusion == "rrf":
            by_centred = sorted(docs, key=lambda i: -float(keys[i - 1] @ centred))
            assert [h.id for h in found.hits] == by_centred
        for h in found.hits:
            assert h.vec_distance == pytest.approx(1.0 - float(keys[h.id - 1] @ qvec), abs=1e-4)
    flat = retrieve(idx, query, qvec, 5, "vec", Policy())
    assert [h.id for h in flat.hits] == sorted(docs, key=lambda i: -float(keys[i - 1] @ qvec))


def test_the_setting_says_which_searches_centre(isolated_home: object) -> None:
    for value, library, memory in (
        ("library", True, False),
        ("all", True, True),
        ("off", False, False),
    ):
        settings = Settings.load(overrides={"search_centre": value, "embedder": "none"})
        app = Tideline(settings)
        try:
            assert app.memory.turn_policy.centre is memory
            assert app.memory.narrative_policy.centre is memory
            assert library_options(settings)["policy"].centre is library
        finally:
            app.close()
    with pytest.raises(ConfigError, match="search_centre='sometimes' is unknown"):
        library_options(Settings.load(overrides={"search_centre": "sometimes"}))
