"""Owner of the `fact_text` index and `fact_themes`: facts made searchable, and their themes.

Both are derived data, filled after Sleep's transaction (seed: "post-transaction"), and can be
rebuilt at any time: a fact's text (subject, category, value) never changes, so each fact is
indexed once; vectors follow the embedder like every `TextIndex` (a new model re-embeds).
Themes are replaced whole, in one transaction, by each run that computes them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import NotRequired, TypedDict

import numpy as np

from tideline.embed import Embedder
from tideline.profile._records import Fact, _Dict
from tideline.search import (
    FillReport,
    Hit,
    Mode,
    Policy,
    Scope,
    create_index,
    open_index,
    retrieve,
)
from tideline.store import Storage

FACT_INDEX = "fact_text"
#: Fact search: the default fusion, scored as facts (`tideline.search._score`).
FACTS = Policy(kind="fact")


def fact_text(fact: Fact) -> str:
    """What search and the embedder see of a fact."""
    return f"{fact.subject} · {fact.category}: {fact.value}"


class Indexed(TypedDict):
    """What `Profile.index_facts` did: facts newly indexed, vectors written, why not all were."""

    indexed: int
    embedded: int
    error: NotRequired[str]


@dataclass
class Theme(_Dict):
    label: str
    size: int
    fact_ids: list[int]
    built_at: str


class FactIndex:
    def __init__(self, db: Storage):
        self.db = db
        self.index = open_index(db, FACT_INDEX)

    @staticmethod
    def create_tables(db: Storage) -> None:
        create_index(db, FACT_INDEX)
        db.execute(
            """CREATE TABLE fact_themes(
                id INTEGER PRIMARY KEY,
                label TEXT NOT NULL,
                size INTEGER NOT NULL,
                fact_ids TEXT NOT NULL DEFAULT '[]',
                built_at TEXT NOT NULL)"""
        )

    def unindexed(self, facts: Sequence[Fact]) -> list[tuple[int, str]]:
        done = self.index.text_ids()
        return [(f.id, fact_text(f)) for f in facts if f.id not in done]

    def add_texts(self, items: Sequence[tuple[int, str]]) -> None:
        self.index.upsert_many(items)

    def unembedded(self, facts: Sequence[Fact]) -> list[tuple[int, str]]:
        done = self.index.vector_ids()
        return [(f.id, fact_text(f)) for f in facts if f.id not in done]

    def embed(
        self,
        embedder: Embedder,
        items: Sequence[tuple[int, str]],
        guard: AbstractContextManager[object],
    ) -> FillReport:
        with guard:
            self.index.bind_vectors(embedder.model_id, embedder.dim)
        return self.index.fill_vectors(embedder, items, guard=guard)

    def vectors(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        return {i: v[0] for i, v in self.index.vectors_of(list(ids)).items()}

    def search(
        self,
        query: str,
        qvec: np.ndarray | None,
        k: int,
        scope: tuple[str, list[object]],
        floor: float = 0.0,
    ) -> list[Hit]:
        """Hybrid (lexical without `qvec`) over the facts `scope` selects (their owner's
        filter), none less relevant than `floor`."""
        where, params = scope
        mode: Mode = "hybrid" if qvec is not None else "lex"
        policy = replace(FACTS, floor=floor)
        found = retrieve(Scope(self.index, where, tuple(params)), query, qvec, k, mode, policy)
        return found.top(k)

    # -- themes ------------------------------------------------------------------------------
    def replace_themes(self, themes: Sequence[tuple[str, list[int]]], now: str) -> None:
        with self.db.transaction():
            self.db.execute("DELETE FROM fact_themes")
            self.db.executemany(
                "INSERT INTO fact_themes(label, size, fact_ids, built_at) VALUES (?, ?, ?, ?)",
                [(label, len(ids), json.dumps(ids), now) for label, ids in themes],
            )

    def themes(self) -> list[Theme]:
        rows = self.db.rows(
            "SELECT label, size, fact_ids, built_at FROM fact_themes ORDER BY size DESC, id"
        )
        return [Theme(**{**r, "fact_ids": json.loads(r["fact_ids"])}) for r in rows]

    def count(self) -> dict[str, int]:
        return {"fact_themes": int(self.db.scalar("SELECT COUNT(*) FROM fact_themes"))}
