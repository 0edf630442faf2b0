"""`TextIndex.stored_vectors`: how a repair reads the vectors of a damaged file's index (every
part of a long record, not only its first)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tideline.search import TextIndex
from tideline.store import open_database


def test_every_part_of_every_record_is_read_back(tmp_path: Path) -> None:
    db = open_database(tmp_path / "v.db")
    index = TextIndex(db, "notes")
    index.upsert_many([(1, "short"), (2, "long")])
    index.bind_vectors("model-x", 4)
    one = np.array([1, 0, 0, 0], dtype=np.float32)
    parts = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.float32)
    index.set_vectors([(1, one), (2, parts)])

    space, vectors = TextIndex.stored_vectors(db.conn, "notes")

    assert space == ("model-x", 4)
    assert vectors[1].tolist() == [one.tolist()]
    assert vectors[2].tolist() == parts.tolist()
    assert TextIndex.stored_vectors(db.conn, "nothing") == (None, {})
