"""Every table has one owner: only that module creates it or runs SQL on it; other modules call
the owner's methods (docs/architecture.md, "Tables and their owners").

The check reads every string constant and f-string in `src` (an f-string's values read as "X",
so `f"FROM {name}_vec"` is "FROM X_vec") and finds table names after FROM, JOIN, INTO, UPDATE, ON
and TABLE. A table created anywhere must be listed here. The self-test plants a query on
`narratives` in the injection tiers and sees it named.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "tideline"

#: table -> the module (path under src/tideline) that owns it; None: nobody may query it yet.
OWNERS: dict[str, str | None] = {
    # the agent database (memory.db)
    "sessions": "memory/_raw.py",
    "turns": "memory/_raw.py",
    "narratives": "memory/_narratives.py",
    "narrative_tags": "memory/_narratives.py",
    "narrative_links": "memory/_narratives.py",
    **dict.fromkeys(
        (
            "topic_clusters",
            "topic_members",
            "emb_clusters",
            "emb_cluster_members",
            "emb_cluster_adjacency",
            "attention_log",
            "entity_roles",
            "entity_pairs",
            "runs",
        ),
        "analysis/_store.py",
    ),
    "_migrations": "store/_migrations.py",
    "write_keys": "store/_write_keys.py",  # idempotency keys, in memory.db and the library's writes.db
    # the profile (issue 11), in the agent database too
    "events": "profile/_events.py",
    "facts": "profile/_facts.py",
    "fact_changes": "profile/_facts.py",
    "fact_evidence": "profile/_facts.py",
    "edges": "profile/_edges.py",
    "observations": "profile/_observations.py",
    "relationships": "profile/_people.py",
    "snapshots": "profile/_portrait.py",
    "trajectory": "profile/_portrait.py",
    "user_model": "profile/_portrait.py",
    "processed_sessions": "profile/_sleep_runs.py",
    "sleep_runs": "profile/_sleep_runs.py",
    "strategies": "profile/_strategies.py",
    "profile_version": "profile/_profile_version.py",
    "session_digests": "profile/_digests.py",
    "fact_themes": "profile/_fact_index.py",
    # the Sleep pipeline's session memory
    "session_summaries": "consolidate/_summaries.py",
    # the DREAM layers: run records, threads, what reflections and dreams rest on
    "dream_runs": "consolidate/dream/_dream_runs.py",
    "dream_layers": "consolidate/dream/_dream_runs.py",
    "threads": "consolidate/dream/_threads.py",
    "thread_memories": "consolidate/dream/_threads.py",
    "dream_basis": "consolidate/dream/_basis.py",
    # a library collection's index (.memo/index.db) and the router (.memo/router.db)
    "files": "library/_collection_index.py",
    "chunks": "library/_collection_index.py",
    "routes": "library/_router.py",
    # the embedding cache
    "embeddings": "embed/_cache.py",
}

#: Throwaway tables of in-memory databases (doctor's probe of FTS5 trigram support).
SCRATCH = {"t"}

#: The index's own tables: N_fts (and FTS5's N_fts_docsize), N_tri, N_vec (and sqlite-vec's N_vec_rowids), N_vecpart,
#: N_veclog, N_lexlog, N_vocab, N_terms (and a connection's temporary N_census) for every index N (N_text on PostgreSQL), `vector_spaces`,
#: `lexical_analysers` and `lexical_terms`. One owner, the index seam: `IndexBase` (what both engines share), its
#: sibling engines `SqliteTextIndex` (with its layers: term statistics, files, vectors) and `PgTextIndex` (term
#: statistics, vectors; docs/postgresql.md), and the vector file's search (`_knn`).
INDEX_TABLE = re.compile(
    r"^(\w+_(fts|fts_docsize|tri|vec|vec_rowids|vecpart|veclog|lexlog|vocab|census|text|terms)|vector_spaces|lexical_analysers|lexical_terms)$"
)
INDEX_OWNER = "search/_index.py"
INDEX_MODULES = (
    "search/_index_base.py",
    "search/_sqlite_terms.py",
    "search/_sqlite_files.py",
    "search/_sqlite_vectors.py",
    "search/_pg_terms.py",
    "search/_pg_vectors.py",
    "search/_pg_index.py",
    "search/_knn.py",
)
#: The run log creates an LLM pipeline's run table for its owner (`RunLog.create_llm_runs(db,
#: "<table>", ...)`): its template's table is a placeholder, and the module that calls it with a
#: table's name must own that table.
RUN_LOG = "store/_run_log.py"

SQL = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|ON|TABLE(?: IF (?:NOT )?EXISTS)?)\s+(?:temp\.)?(\w+)")
CREATE = re.compile(r"\bCREATE (?:VIRTUAL )?TABLE(?: IF NOT EXISTS)? (?:temp\.)?(\w+)")

#: Violations on main that issue 10's branches remove (B: library, C: memory/analysis/inject;
#: issue 9's doctor/repair keep whole-database checks). The list only shrinks: when a branch
#: lands, delete the lines it fixed (empty since repair reads vectors through `TextIndex`).
KNOWN: set[str] = set()


def _strings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text())
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside.update(id(v) for v in node.values)
            yield "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in inside
        ):
            yield node.value


def _owner(table: str) -> str | None:
    return INDEX_OWNER if INDEX_TABLE.match(table) else OWNERS.get(table, "")


def _run_tables(path: Path) -> Iterator[str]:
    """The tables a module has the run log create (`create_llm_runs(db, "<table>", ...)`)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "create_llm_runs"
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
        ):
            yield str(node.args[1].value)


def violations(src: Path = SRC) -> list[str]:
    """ "<module>: <table> (owner <module>)" for SQL outside the owner; "<table>: no owner" for a
    table created but missing from OWNERS."""
    found: set[str] = set()
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        for table in _run_tables(path):
            if _owner(table) != rel:
                found.add(f"{rel}: {table} (owner {_owner(table) or 'none in OWNERS'})")
        for text in _strings(path):
            for table in CREATE.findall(text):
                if rel == RUN_LOG and table == "X":
                    continue
                if _owner(table) == "" and table not in SCRATCH:
                    found.add(f"{table}: created in {rel} but has no owner in OWNERS")
            for table in SQL.findall(text):
                owner = _owner(table)
                if (
                    owner != ""
                    and owner != rel
                    and not (owner == INDEX_OWNER and rel in INDEX_MODULES)
                ):
                    found.add(f"{rel}: {table} (owner {owner})")
    return sorted(found)


def test_only_the_owner_runs_sql_on_a_table() -> None:
    found = set(violations())
    assert not found - KNOWN, sorted(found - KNOWN)
    assert not KNOWN - found, f"fixed, delete from KNOWN: {sorted(KNOWN - found)}"


@pytest.mark.parametrize(
    ("where", "code", "expected"),
    [
        (
            "inject/_tiers.py",
            'Q = "SELECT tag FROM narrative_tags"\n',
            "inject/_tiers.py: narrative_tags",
        ),
        ("memory/_raw.py", 'Q = f"SELECT rowid FROM {name}_vec"\n', "memory/_raw.py: X_vec"),
        (
            "library/_router.py",
            'Q = "DELETE FROM chunks WHERE id = ?"\n',
            "library/_router.py: chunks",
        ),
        ("store/_database.py", 'Q = "CREATE TABLE IF NOT EXISTS stray(x)"\n', "stray: created in"),
        (
            "memory/_raw.py",
            'def f(db):\n    RunLog.create_llm_runs(db, "sleep_runs", (), "")\n',
            "memory/_raw.py: sleep_runs",
        ),
    ],
)
def test_the_check_names_a_planted_query(
    tmp_path: Path, where: str, code: str, expected: str
) -> None:
    tree = tmp_path / "tideline"
    shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / where).write_text(code + (tree / where).read_text())
    assert not any(v.startswith(expected) for v in violations(SRC))
    assert any(v.startswith(expected) for v in violations(tree))
