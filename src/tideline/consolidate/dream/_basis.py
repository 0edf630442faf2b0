"""Owner of `dream_basis`: which memories a reflection or a dream rests on.

A self-concept sentence, a drift's connection or a dream is written as a narrative (kind
`reflection` or `dream`) whose source links are the turns behind its memories; this table keeps
the memories themselves (narrative → the narratives it rests on), so the self-concept can show its
grounds and tomorrow's combing can weigh them.
"""

from __future__ import annotations

from collections.abc import Sequence

from tideline.store import Storage, id_lists


class Basis:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            """CREATE TABLE dream_basis(
                narrative_id INTEGER NOT NULL,
                rests_on INTEGER NOT NULL,
                PRIMARY KEY (narrative_id, rests_on)) WITHOUT ROWID"""
        )

    def add(self, narrative_id: int, rests_on: Sequence[int]) -> None:
        """Inside the caller's transaction (the layer's)."""
        self.db.executemany(
            "INSERT INTO dream_basis(narrative_id, rests_on) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(narrative_id, r) for r in rests_on],
        )

    def of(self, narrative_ids: Sequence[int]) -> dict[int, list[int]]:
        """Each narrative's grounds (ascending); narratives without any are left out."""
        found: dict[int, list[int]] = {}
        for marks, part in id_lists(narrative_ids):
            for nid, rid in self.db.execute(
                f"SELECT narrative_id, rests_on FROM dream_basis WHERE narrative_id IN ({marks})"
                " ORDER BY narrative_id, rests_on",
                part,
            ):
                found.setdefault(nid, []).append(rid)
        return found
