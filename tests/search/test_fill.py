"""`TextIndex.fill_vectors`, the one place text becomes vectors: dedupe, donors, outages, atomicity.

The embedder is a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/openai_stub.py), which
records every request and can be told to fail; the long-text case uses the real e5 model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.openai_stub import OpenAIStub
from tideline.embed import Embedder, OpenAIEmbedder
from tideline.search import TextIndex, text_key
from tideline.store import open_database


@pytest.fixture
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dim=16) as server:
        yield server


@pytest.fixture
def embedder(stub: OpenAIStub) -> OpenAIEmbedder:
    return OpenAIEmbedder(stub.url, "stub-model", retries=0, timeout=5, dim=16)


def _index(tmp_path: Path, model: str = "stub-model", dim: int = 16) -> TextIndex:
    idx = TextIndex(open_database(tmp_path / "f.db"), "docs")
    idx.bind_vectors(model, dim)
    return idx


def _sent(stub: OpenAIStub) -> list[list[str]]:
    return [r["body"]["input"] for r in stub.requests]


def test_equal_texts_are_embedded_once_shortest_first(
    tmp_path: Path, stub: OpenAIStub, embedder: OpenAIEmbedder
) -> None:
    idx = _index(tmp_path)
    pending = [(1, "a longer text here"), (2, "short"), (3, "short"), (4, "mid text")]
    done: list[tuple[int, int]] = []
    report = idx.fill_vectors(embedder, pending, batch=2, progress=lambda d, t: done.append((d, t)))
    assert (report.embedded, report.reused, report.pending, report.warning) == (3, 1, 0, None)
    assert _sent(stub) == [["short", "mid text"], ["a longer text here"]]
    assert done == [(3, 4), (4, 4)]
    assert idx.vector_ids() == {1, 2, 3, 4}
    ids, matrix = idx.vectors([3, 2])
    assert ids.tolist() == [2, 3] and np.array_equal(matrix[0], matrix[1])
    assert idx.space == ("stub-model", 16)


def test_donors_give_copies_without_calling_the_embedder(
    tmp_path: Path, stub: OpenAIStub, embedder: OpenAIEmbedder
) -> None:
    idx = _index(tmp_path)
    idx.fill_vectors(embedder, [(10, "kept section")])
    sent = len(stub.requests)
    report = idx.fill_vectors(
        embedder,
        [(11, "kept section"), (12, "kept section")],
        donors={text_key("kept section"): 10},
    )
    assert (report.embedded, report.reused) == (0, 2) and len(stub.requests) == sent
    ids, matrix = idx.vectors()
    assert ids.tolist() == [10, 11, 12] and np.array_equal(matrix[0], matrix[2])


def test_an_outage_stops_the_fill_and_leaves_the_rest_pending(
    tmp_path: Path, stub: OpenAIStub, embedder: OpenAIEmbedder
) -> None:
    idx = _index(tmp_path)
    pending = [(1, "one"), (2, "three"), (3, "fifteen")]

    def fail_from_now(done: int, total: int) -> None:
        stub.fail_next = [500] * 5

    report = idx.fill_vectors(
        embedder, pending, batch=1, progress=fail_from_now, hint="retry later"
    )
    assert report.pending == 2 and report.embedded == 1 and idx.vector_ids() == {1}
    assert report.warning is not None and "\n" not in report.warning
    assert report.warning.startswith("2 texts not embedded yet (") and report.warning.endswith(
        "; retry later"
    )
    stub.fail_next = []
    again = idx.fill_vectors(embedder, pending[1:])
    assert again.pending == 0 and idx.vector_ids() == {1, 2, 3}


def test_on_batch_commits_with_its_vectors_or_not_at_all(
    tmp_path: Path, embedder: OpenAIEmbedder
) -> None:
    idx = _index(tmp_path)
    db = idx.db
    db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, embedded INTEGER NOT NULL DEFAULT 0)")
    db.executemany("INSERT INTO items(id) VALUES (?)", [(1,), (2,)])
    calls = 0

    def mark(ids: object) -> None:
        nonlocal calls
        calls += 1
        db.executemany("UPDATE items SET embedded = 1 WHERE id = ?", [(i,) for i in ids])  # type: ignore[attr-defined]
        if calls == 2:
            raise RuntimeError("the owner's bookkeeping failed")

    with pytest.raises(RuntimeError, match="bookkeeping"):
        idx.fill_vectors(embedder, [(1, "aa"), (2, "bbbb")], batch=1, on_batch=mark)
    assert idx.vector_ids() == {1}
    assert db.execute("SELECT id FROM items WHERE embedded = 1").fetchall() == [(1,)]


def test_long_texts_get_one_vector_per_part(tmp_path: Path, e5: Embedder) -> None:
    idx = _index(tmp_path, e5.model_id, e5.dim)
    long_text = " ".join(f"word{n} about seagull nests" for n in range(120))  # 844 tokens
    report = idx.fill_vectors(e5, [(9, long_text), (8, "a short one")])
    assert report.embedded == 2 and idx.vectors_of([9])[9].shape[0] >= 2
    assert idx.vectors()[1].shape == (2, e5.dim)  # one row per record: its first part


def test_an_unbound_index_has_no_space_and_fills_nothing(
    tmp_path: Path, stub: OpenAIStub, embedder: OpenAIEmbedder
) -> None:
    idx = TextIndex(open_database(tmp_path / "u.db"), "docs")
    assert idx.space is None and idx.vectors()[0].size == 0
    assert idx.fill_vectors(embedder, [(1, "x")]).pending == 1 and not stub.requests
