"""Health checks behind `tideline doctor`: versions, extensions, the embedder, the home folder,
and every database file it knows of (the agent's memory.db, each library collection's index) —
or, with `TIDELINE_DATABASE_URL`, the PostgreSQL server, pgvector and the agent's namespace."""

from __future__ import annotations

import platform
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw

from tideline.analysis import ANALYSIS_MIGRATIONS
from tideline.config import Settings
from tideline.consolidate import CONSOLIDATE_MIGRATIONS, DREAM_MIGRATIONS
from tideline.errors import TidelineError
from tideline.memory import AGENT_MIGRATIONS, NARRATIVE_INDEX, TURN_INDEX
from tideline.profile import PROFILE_MIGRATIONS
from tideline.search import PgTextIndex, damaged_search_files
from tideline.store import (
    REPAIR_HINT,
    Namespace,
    check_file,
    forget_damage,
    open_postgres,
    remember_damage,
    shown_url,
)
from tideline.upkeep._pg_health import check_namespace

AGENT_DATABASE = "agent database"
LIBRARY_INDEX = "library index"
SEARCH_FILE = "search file"
SEARCH_FILE_HINT = "run `tideline doctor --repair`: it is deleted and built again from the database"
#: The indexes whose vector and lexical files lie beside the agent database.
SEARCH_INDEXES = (TURN_INDEX, NARRATIVE_INDEX)
PG_REPAIR = "run `tideline doctor --repair` to build it"
#: Every migration set of the agent database (repair builds a new file from all of them).
MIGRATION_SETS = (
    AGENT_MIGRATIONS,
    ANALYSIS_MIGRATIONS,
    PROFILE_MIGRATIONS,
    CONSOLIDATE_MIGRATIONS,
    DREAM_MIGRATIONS,
)
ROW_COUNTS = (
    "sessions",
    "turns",
    "forgotten_turns",
    "narratives",
    "turn_vectors",
    "narrative_vectors",
)
INDEX_HINT = (
    "run `tideline doctor --repair` (or `memo reindex --full`): it is rebuilt from the notes"
)


@dataclass
class FileCheck:
    """One database file: which role it plays and what is wrong with it ([] = sound)."""

    path: str
    role: str
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


@dataclass
class Report:
    """What `doctor` found. `problems` is empty when everything needed is there."""

    facts: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    files: list[FileCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _probe_sqlite(report: Report) -> None:
    report.facts["sqlite"] = apsw.sqlite_lib_version()
    report.facts["apsw"] = apsw.apsw_version()
    conn = apsw.Connection(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
        report.facts["fts5_trigram"] = True
    except apsw.Error as exc:
        report.facts["fts5_trigram"] = False
        report.problems.append(f"FTS5 trigram tokenizer missing ({exc}); upgrade apsw")
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        report.facts["sqlite_vec"] = conn.execute("SELECT vec_version()").fetchall()[0][0]
    except Exception as exc:
        report.facts["sqlite_vec"] = None
        report.problems.append(
            f"sqlite-vec cannot load ({exc}); vector search is off — pip install --force-reinstall sqlite-vec"
        )
    finally:
        conn.close()


def _probe_embedder(report: Report, settings: Settings) -> None:
    from tideline.app import embedder_from

    report.facts["embedder"] = settings.embedder
    try:
        emb = embedder_from(settings, cache=False)
        report.facts["embedder_model"] = emb.model_id
        report.facts["embedder_dim"] = emb.dim
        if emb.dim:
            vec = emb.embed_query("doctor")
            if len(vec) != emb.dim:
                report.problems.append(f"embedder returned {len(vec)} dims, expected {emb.dim}")
    except TidelineError as exc:
        report.facts["embedder_dim"] = None
        report.problems.append(str(exc))


def _probe_home(report: Report, settings: Settings) -> None:
    report.facts["agent"] = settings.agent_name
    report.facts["home"] = str(settings.home)
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=settings.home):
            pass
        report.facts["home_writable"] = True
    except OSError as exc:
        report.facts["home_writable"] = False
        report.problems.append(
            f"home {settings.home} is not writable ({exc.strerror}); set TIDELINE_HOME to a writable folder"
        )


def _probe_vectors(report: Report, settings: Settings) -> None:
    """Records committed without a vector (a kill or an outage after the write); the next write,
    import or `tideline embed` fills them. On PostgreSQL, with the namespace's row counts."""
    damaged = any(c.role == AGENT_DATABASE and c.problems for c in report.files)
    if settings.database_url:
        if not report.facts.get("schema"):
            return
    elif damaged or not settings.db_path.is_file():
        return
    from tideline.app import Tideline

    app = Tideline(settings)
    try:
        if settings.database_url:
            stats = app.memory.stats()
            report.facts["rows"] = {k: stats[k] for k in ROW_COUNTS if k in stats}
            report.facts["vectors_pending"] = stats["vectors_pending"]
        else:
            report.facts["vectors_pending"] = app.memory.pending_vectors()
    except (TidelineError, apsw.Error) as exc:
        report.facts["vectors_pending"] = None
        where = (settings.database_url and report.facts["namespace"]) or settings.db_path
        report.problems.append(f"pending vectors of {where} not counted ({exc})")
    finally:
        app.close()


def _probe_postgres(report: Report, settings: Settings) -> None:
    """The server and its version, pgvector, the namespace's schema, its migrations and its
    GIN and HNSW indexes (row counts and vectors come with `_probe_vectors`)."""
    url = settings.database_url
    report.facts["database"] = shown_url(url)
    report.facts["schema"] = False
    try:
        namespace = Namespace(settings.agent_name, settings.database_user or None)
        report.facts["namespace"] = namespace.schema
        health = check_namespace(url, namespace.schema)
    except TidelineError as exc:
        report.problems.append(str(exc))
        return
    report.facts["postgresql"] = health.server
    report.facts["pgvector"] = health.pgvector
    if health.pgvector is None:
        fix = (
            f"CREATE EXTENSION vector as a superuser (version {health.pgvector_available})"
            if health.pgvector_available
            else "install pgvector on the server (https://github.com/pgvector/pgvector)"
        )
        report.problems.append(f"pgvector is not in the database {shown_url(url)}; {fix}")
        return
    if not health.schema:
        report.facts["note"] = (
            f"namespace {namespace.schema} holds nothing yet: the first command creates it, "
            "`tideline migrate --to` copies a SQLite memory into it"
        )
        return
    report.facts["schema"] = True
    report.facts["migrations"] = _migrations(report, url, namespace)
    wanted: dict[str, str] = {}
    for name in (TURN_INDEX, NARRATIVE_INDEX):
        wanted |= PgTextIndex.wanted_indexes(name, health.tables)
    report.facts["indexes"] = {n: health.indexes.get(n, ("missing", False))[0] for n in wanted}
    for name, method in wanted.items():
        found, valid = health.indexes.get(name, (None, False))
        if found is None:
            report.problems.append(f"{method} index {name} is missing; {PG_REPAIR}")
        elif not valid:
            report.problems.append(
                f"{method} index {name} is invalid (a build was cut short); "
                f'run REINDEX INDEX "{namespace.schema}".{name}'
            )


def _migrations(report: Report, url: str, namespace: Namespace) -> dict[str, str]:
    """Each migration set's applied steps of its latest; steps from a newer Tideline are a
    problem, pending ones run when the agent next opens."""
    db = open_postgres(url, namespace, pool_size=1)  # no sets given: reads, migrates nothing
    try:
        found = {}
        for m in MIGRATION_SETS:
            applied = max(m.applied(db), default=0)
            found[m.name] = f"{applied}/{m.latest}"
            if applied > m.latest:
                report.problems.append(
                    f"namespace {namespace.schema} has {m.name} migration {applied}, newer than "
                    f"this Tideline's {m.latest}; upgrade Tideline"
                )
        return found
    finally:
        db.close()


def database_files(settings: Settings) -> list[tuple[str, Path]]:
    """(role, path) of every existing database file Tideline owns for this agent and library
    (on PostgreSQL, the library's only: a memory.db left beside is no longer the agent's)."""
    own = settings.db_path.exists() and not settings.database_url
    found = [(AGENT_DATABASE, settings.db_path)] if own else []
    root = settings.memo_root
    if root is None or not root.is_dir():
        return found
    from tideline.library import scan_library

    try:
        layout = scan_library(root)
    except (TidelineError, OSError):
        return found
    indexes = [c.index_dir / "index.db" for c in layout.collections]
    indexes.append(layout.root / ".memo" / "router.db")
    return found + [(LIBRARY_INDEX, p) for p in indexes if p.exists()]


def check_databases(settings: Settings) -> list[FileCheck]:
    """Header, write-ahead log and `PRAGMA quick_check` of each file. Damage in the agent
    database is remembered (every command then refuses it); a clean check forgets it."""
    checks = []
    for role, path in database_files(settings):
        check = FileCheck(str(path), role, check_file(path))
        if role == AGENT_DATABASE:
            if check.problems:
                remember_damage(path, check.problems[0])
            else:
                forget_damage(path)
        checks.append(check)
    return checks


def check_search_files(settings: Settings) -> list[FileCheck]:
    """Every byte of the vector and lexical files beside a sound agent database against their
    seals (they are disposable: a damaged one is rebuilt from the database)."""
    path = settings.db_path
    if settings.database_url or not path.is_file():
        return []
    found = damaged_search_files(path, SEARCH_INDEXES)
    return [FileCheck(str(folder), SEARCH_FILE, [problem]) for folder, problem in found]


def _probe_databases(report: Report, settings: Settings) -> None:
    report.files = check_databases(settings)
    if not any(c.role == AGENT_DATABASE and c.problems for c in report.files):
        report.files += check_search_files(settings)
    hints = {AGENT_DATABASE: REPAIR_HINT, LIBRARY_INDEX: INDEX_HINT, SEARCH_FILE: SEARCH_FILE_HINT}
    for check in report.files:
        report.problems += [f"{check.path} {p}; {hints[check.role]}" for p in check.problems]


def run_doctor(settings: Settings) -> Report:
    """Check everything Tideline needs; never raises."""
    report = Report()
    report.facts["python"] = platform.python_version()
    from tideline import __version__

    report.facts["tideline"] = __version__
    _probe_sqlite(report)
    _probe_embedder(report, settings)
    _probe_home(report, settings)
    if settings.database_url:
        _probe_postgres(report, settings)
    _probe_databases(report, settings)
    _probe_vectors(report, settings)
    return report
