"""A filtered lexical search checks the owner's filter on each match; it never hands FTS5 the
filter's rowids (the planner then runs the full-text query once per listed rowid: 0.1–12 s per
memory search at 10k narratives / 50k turns, docs/benchmarks.md "Injection hooks")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tideline.search import Scope, TextIndex, retrieve
from tideline.store import open_database

#: FTS5's index string in a plan: "=" marks a rowid equality constraint, "M" the MATCH.
_FTS_INDEX = re.compile(r"VIRTUAL TABLE INDEX \d+:(\S*)")


def test_a_filter_is_checked_per_match_not_pushed_into_fts5(tmp_path: Path) -> None:
    db = open_database(tmp_path / "plan.db")
    db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, keep INTEGER NOT NULL)")
    texts = [(i, f"harbour note {i} " + ("ferry" if i % 7 == 0 else "tide")) for i in range(1, 301)]
    db.executemany("INSERT INTO items(id, keep) VALUES (?, ?)", [(i, i % 2) for i, _ in texts])
    index = TextIndex(db, "notes")
    index.upsert_many(texts)
    where = "rowid IN (SELECT id FROM items WHERE keep = ?)"
    ran: list[tuple[str, tuple[Any, ...]]] = []

    def trace(_cursor: Any, sql: str, bindings: Any) -> bool:
        if " MATCH " in sql and not sql.startswith("EXPLAIN"):
            ran.append((sql, tuple(bindings or ())))
        return True

    db.conn.exec_trace = trace
    # "ferrie" is no BM25 term of any note, so the trigram table is searched too (top-up).
    found = retrieve(Scope(index, where, (1,)), "ferry ferrie", None, 10, "lex")
    db.conn.exec_trace = None

    assert found.hits and all(h.id % 2 == 1 for h in found.hits)  # the filter still holds
    tables = {re.search(r"FROM (\w+)", sql)[1] for sql, _ in ran}  # type: ignore[index]
    assert tables == {"notes_fts", "notes_tri"}
    for sql, bindings in ran:
        plan = " | ".join(r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql, bindings))
        idx = _FTS_INDEX.search(plan)
        assert idx is not None and "M" in idx[1], plan
        assert "=" not in idx[1], f"the filter's rowids reached FTS5: {plan}"
