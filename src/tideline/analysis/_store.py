"""`ScriptTables`: the repository of the script layer's own tables in the agent database.

The script layer owns `topic_clusters`/`topic_members` (the keyword taxonomy), `emb_clusters`/
`emb_cluster_members`/`emb_cluster_adjacency` (soft clusters of the narrative vectors),
`attention_log`, `entity_roles`/`entity_pairs` (the entity graph) and `runs` (one row per step of a
pipeline run). They are created by its own migration set, `ANALYSIS_MIGRATIONS` ("analysis"), and
this is the only module with SQL on them. Narratives, turns and vectors are read through the public
`tideline.memory` API, never here.

Rebuilt tables are compared with what is stored before anything is written: when a step computes
exactly the rows already there, it writes nothing (so `built_at` stamps stay put and a second
`scripts all` changes nothing); otherwise the rows are replaced in one transaction, so a run killed
half-way leaves the previous result.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tideline.clock import Clock, now_text
from tideline.runs import Book, recorded
from tideline.store import Migrations, RunLog, Storage, time_range

__all__ = ["ANALYSIS_MIGRATIONS", "Row", "ScriptTables"]

ANALYSIS_MIGRATIONS = Migrations("analysis")
_RUN_COLUMNS = ("id", "pipeline", "step", "status", "summary", "started_at", "finished_at")


@dataclass
class StepRun:
    """One script step's run as the runner records it: `ok` unless the step raised (then the
    runner makes it `failed`), with the summary the step fills; the rest is the runner's
    report (no LLM: no tokens, and no meter to load one)."""

    summary: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    reason: str = ""
    tokens: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


#: One stored row as a tuple, in the column order of the method that returned it.
Row = tuple[Any, ...]


@ANALYSIS_MIGRATIONS.step(1)
def _script_layer(db: Storage) -> None:
    """The tables the script layer rebuilds (topics, soft clusters, entity graph) or appends to
    (attention, runs). Until this set existed they were agent#2, so an old database already has
    them: IF NOT EXISTS keeps its rows."""
    db.execute(
        """CREATE TABLE IF NOT EXISTS topic_clusters(
            id INTEGER PRIMARY KEY,
            keyword TEXT NOT NULL UNIQUE,
            label TEXT NOT NULL,
            size INTEGER NOT NULL,
            keywords TEXT NOT NULL DEFAULT '[]',
            built_at TEXT NOT NULL)"""
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS topic_members(
            topic_id INTEGER NOT NULL REFERENCES topic_clusters(id) ON DELETE CASCADE,
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            PRIMARY KEY (topic_id, narrative_id)) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX IF NOT EXISTS topic_members_narrative ON topic_members(narrative_id)")
    db.execute(
        """CREATE TABLE IF NOT EXISTS emb_clusters(
            id INTEGER PRIMARY KEY,
            size INTEGER NOT NULL,
            soft_size INTEGER NOT NULL DEFAULT 0,
            centroid BLOB NOT NULL,
            model_id TEXT NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            built_at TEXT NOT NULL)"""
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS emb_cluster_members(
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            cluster_id INTEGER NOT NULL REFERENCES emb_clusters(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL,
            similarity REAL NOT NULL,
            PRIMARY KEY (narrative_id, cluster_id)) WITHOUT ROWID"""
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS emb_cluster_members_cluster ON emb_cluster_members(cluster_id)"
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS emb_cluster_adjacency(
            a INTEGER NOT NULL REFERENCES emb_clusters(id) ON DELETE CASCADE,
            b INTEGER NOT NULL REFERENCES emb_clusters(id) ON DELETE CASCADE,
            shared INTEGER NOT NULL,
            PRIMARY KEY (a, b)) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS attention_log(
            id INTEGER PRIMARY KEY,
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            cluster_id INTEGER,
            similarity REAL NOT NULL,
            query TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT 'prefetch',
            at TEXT NOT NULL)"""
    )
    db.execute("CREATE INDEX IF NOT EXISTS attention_log_at ON attention_log(at)")
    db.execute(
        """CREATE TABLE IF NOT EXISTS entity_roles(
            entity TEXT NOT NULL,
            role TEXT NOT NULL,
            memories INTEGER NOT NULL,
            stable INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (entity, role)) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS entity_pairs(
            a TEXT NOT NULL,
            b TEXT NOT NULL,
            memories INTEGER NOT NULL,
            role_pairs TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (a, b)) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE IF NOT EXISTS runs(
            id INTEGER PRIMARY KEY,
            pipeline TEXT NOT NULL,
            step TEXT NOT NULL,
            status TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '{}',
            started_at TEXT NOT NULL,
            finished_at TEXT)"""
    )


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


class ScriptTables:
    """The script layer's tables in one agent database."""

    def __init__(self, db: Storage, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return [tuple(r) for r in self.db.execute(sql, params)]

    def _replace(self, *tables: tuple[str, Sequence[Row]]) -> None:
        """Each `table(columns)` emptied and filled with its rows, in one transaction: emptied in
        the order given (a table before the ones it refers to), filled in the reverse."""
        with self.db.transaction():
            for into, _ in tables:
                self.db.execute(f"DELETE FROM {into[: into.index('(')]}")
            for into, rows in reversed(tables):
                marks = ", ".join("?" * (into.count(",") + 1))
                self.db.executemany(f"INSERT INTO {into} VALUES ({marks})", rows)

    # -- topics ------------------------------------------------------------------------------
    def topics(self) -> list[Row]:
        """(id, keyword, label, size, keywords JSON) by id."""
        return self._rows(
            "SELECT id, keyword, label, size, keywords FROM topic_clusters ORDER BY id"
        )

    def topic_members(self) -> list[Row]:
        """(topic id, narrative id), sorted."""
        return self._rows(
            "SELECT topic_id, narrative_id FROM topic_members ORDER BY topic_id, narrative_id"
        )

    def replace_topics(self, topics: Sequence[Row], members: Sequence[Row], stamp: str) -> None:
        """Replace every topic (rows as `topics()` gives them) and member in one transaction."""
        self._replace(
            ("topic_members(topic_id, narrative_id)", members),
            (
                "topic_clusters(id, keyword, label, size, keywords, built_at)",
                [(*r, stamp) for r in topics],
            ),
        )

    def topic_map(self, limit: int) -> tuple[list[dict[str, Any]], int]:
        """The `limit` largest topics (id, label, size, keywords list, built_at) and how many
        topics there are in all (the memory map, T3)."""
        rows = self.db.rows(
            "SELECT id, label, size, keywords, built_at FROM topic_clusters"
            " ORDER BY size DESC, id LIMIT ?",
            (limit,),
        )
        for r in rows:
            try:
                r["keywords"] = [str(w) for w in json.loads(r["keywords"] or "[]")]
            except ValueError:
                r["keywords"] = []
        return rows, int(self.db.scalar("SELECT count(*) FROM topic_clusters"))

    def topics_by_narrative(self) -> dict[int, list[int]]:
        """The topic ids of each narrative that has one."""
        found: dict[int, list[int]] = defaultdict(list)
        for tid, nid in self.db.execute("SELECT topic_id, narrative_id FROM topic_members"):
            found[nid].append(tid)
        return dict(found)

    def topic_labels(self) -> dict[int, tuple[str, int]]:
        """Each topic's (label, size)."""
        return {
            r[0]: (r[1], r[2])
            for r in self.db.execute("SELECT id, label, size FROM topic_clusters")
        }

    # -- soft clusters -----------------------------------------------------------------------
    def clusters(self) -> list[Row]:
        """(id, size, soft size, centroid blob, model id, label) by id."""
        return self._rows(
            "SELECT id, size, soft_size, centroid, model_id, label FROM emb_clusters ORDER BY id"
        )

    def cluster_members(self) -> list[Row]:
        """(narrative id, cluster id, rank, similarity), sorted."""
        return self._rows(
            "SELECT narrative_id, cluster_id, rank, similarity FROM emb_cluster_members"
            " ORDER BY narrative_id, cluster_id"
        )

    def replace_clusters(
        self,
        clusters: Sequence[Row],
        members: Sequence[Row],
        adjacency: Sequence[Row],
        stamp: str,
    ) -> None:
        """Replace the clusters (rows as `clusters()` gives them), their members and adjacency."""
        self._replace(
            ("emb_cluster_adjacency(a, b, shared)", adjacency),
            ("emb_cluster_members(narrative_id, cluster_id, rank, similarity)", members),
            (
                "emb_clusters(id, size, soft_size, centroid, model_id, label, built_at)",
                [(*r, stamp) for r in clusters],
            ),
        )

    def centroids(self) -> tuple[list[int], np.ndarray]:
        """Cluster ids and their unit centroids (one row each); empty before the first build."""
        rows = self.db.execute("SELECT id, centroid FROM emb_clusters ORDER BY id").fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [r[0] for r in rows], np.vstack(
            [np.frombuffer(r[1], dtype=np.float32) for r in rows]
        )

    def widen(self, cluster_ids: Iterable[int], min_shared: int = 1) -> list[int]:
        """The given clusters (in order, no repeats), then every cluster sharing at least
        `min_shared` narratives with one of them, most shared first."""
        hits = list(dict.fromkeys(int(c) for c in cluster_ids))
        if not hits:
            return []
        rows = self.db.execute(
            f"SELECT b, max(shared) FROM emb_cluster_adjacency WHERE a IN ({_marks(hits)})"
            " AND shared >= ? GROUP BY b ORDER BY 2 DESC, b",
            (*hits, max(1, min_shared)),
        ).fetchall()
        seen = set(hits)
        return hits + [b for b, _ in rows if b not in seen]

    def cluster_narratives(self, cluster_ids: Iterable[int], max_rank: int = 3) -> list[int]:
        """Narratives that have one of these clusters among their `max_rank` nearest."""
        wanted = list(dict.fromkeys(int(c) for c in cluster_ids))
        if not wanted:
            return []
        return [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT narrative_id FROM emb_cluster_members"
                f" WHERE cluster_id IN ({_marks(wanted)}) AND rank <= ? ORDER BY narrative_id",
                (*wanted, max_rank),
            )
        ]

    def nearest_cluster(self, narrative_ids: Sequence[int]) -> dict[int, int]:
        """Each narrative's nearest cluster now (rank 1), where it has one."""
        if not narrative_ids:
            return {}
        return dict(
            self.db.execute(
                "SELECT narrative_id, cluster_id FROM emb_cluster_members"
                f" WHERE rank = 1 AND narrative_id IN ({_marks(narrative_ids)})",
                list(narrative_ids),
            ).fetchall()
        )

    # -- attention ---------------------------------------------------------------------------
    def log_attention(self, rows: Sequence[Row]) -> None:
        """Append (narrative id, cluster id, similarity, query, source, at) rows."""
        with self.db.transaction():
            self.db.executemany(
                "INSERT INTO attention_log(narrative_id, cluster_id, similarity, query, source, at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )

    def attention(self, since: str | None, until: str | None) -> tuple[int, list[Row]]:
        """Hits logged between `since` and `until` (inclusive, both optional): their number, and
        per current nearest cluster (cluster id, hits, distinct narratives, mean similarity,
        last hit)."""
        conds, params = time_range("a.at", since, until)
        where = f"WHERE {' AND '.join(conds)}" if conds else ""
        total = int(self.db.scalar(f"SELECT count(*) FROM attention_log a {where}", params) or 0)
        rows = self._rows(
            "SELECT m.cluster_id, count(*), count(DISTINCT a.narrative_id), avg(a.similarity),"
            " max(a.at) FROM attention_log a JOIN emb_cluster_members m"
            f" ON m.narrative_id = a.narrative_id AND m.rank = 1 {where} GROUP BY m.cluster_id",
            params,
        )
        return total, rows

    # -- entity graph ------------------------------------------------------------------------
    def entity_rows(self) -> tuple[list[Row], list[Row]]:
        """(entity, role, memories, stable) and (a, b, memories, role pairs JSON), sorted."""
        roles = self._rows(
            "SELECT entity, role, memories, stable FROM entity_roles ORDER BY entity, role"
        )
        pairs = self._rows("SELECT a, b, memories, role_pairs FROM entity_pairs ORDER BY a, b")
        return roles, pairs

    def replace_entity_graph(self, roles: Sequence[Row], pairs: Sequence[Row]) -> None:
        """Replace the graph (rows as `entity_rows()` gives them) in one transaction."""
        self._replace(
            ("entity_pairs(a, b, memories, role_pairs)", pairs),
            ("entity_roles(entity, role, memories, stable)", roles),
        )

    # -- runs --------------------------------------------------------------------------------
    def record_run(self, step: str, pipeline: str = "scripts") -> AbstractContextManager[StepRun]:
        """Log one step in `runs` through the runner's record (`tideline.runs.recorded`):
        'running' first, then 'ok' with its summary or 'failed' when the block raised.

        A killed run leaves its row at 'running', which is how a later reader tells it was cut
        short (the script layer takes no lock, so no run closes another's row).
        """
        runs = RunLog(self.db, "runs", _RUN_COLUMNS, ("summary",))

        def start() -> int:
            return runs.start(now_text(self.clock), pipeline=pipeline, step=step)

        def finish(run_id: int, run: StepRun) -> None:
            runs.finish(run_id, run.status, now_text(self.clock), summary=run.summary)

        book = Book[StepRun](lambda: None, start, lambda run_id, spent_in, spent_out: None, finish)
        return recorded(book, lambda run_id: StepRun())

    def last_run(self, step: str, pipeline: str = "scripts") -> dict[str, Any] | None:
        """The latest finished run of `step` (finished_at, summary), or None if it never ran."""
        row = self.db.one(
            "SELECT finished_at, summary FROM runs WHERE pipeline = ? AND step = ?"
            " AND status = 'ok' ORDER BY id DESC LIMIT 1",
            (pipeline, step),
        )
        if row is None:
            return None
        try:
            summary = json.loads(row["summary"] or "{}")
        except ValueError:
            summary = {}
        return {"finished_at": row["finished_at"], "summary": summary}
