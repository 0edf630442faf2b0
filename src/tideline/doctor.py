"""Health checks behind `tideline doctor`: versions, extensions, the embedder, the home folder,
and every database file it knows of (the agent's memory.db, each library collection's index)."""

from __future__ import annotations

import platform
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import apsw

from tideline.config import Settings
from tideline.errors import TidelineError
from tideline.store import REPAIR_HINT, check_file, forget_damage, remember_damage

AGENT_DATABASE = "agent database"
LIBRARY_INDEX = "library index"
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
        report.facts["sqlite_vec"] = conn.execute("SELECT vec_version()").fetchone()[0]
    except Exception as exc:
        report.facts["sqlite_vec"] = None
        report.problems.append(
            f"sqlite-vec cannot load ({exc}); vector search is off — pip install --force-reinstall sqlite-vec"
        )
    finally:
        conn.close()


def _probe_embedder(report: Report, settings: Settings) -> None:
    from tideline.embed import load_embedder

    report.facts["embedder"] = settings.embedder
    try:
        emb = load_embedder(settings, cache=False)
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
    import or `tideline embed` fills them."""
    damaged = any(c.role == AGENT_DATABASE and c.problems for c in report.files)
    if damaged or not settings.db_path.is_file():
        return
    from tideline.app import Tideline

    app = Tideline(settings)
    try:
        report.facts["vectors_pending"] = app.memory.pending_vectors()
    except (TidelineError, apsw.Error) as exc:
        report.facts["vectors_pending"] = None
        report.problems.append(f"pending vectors of {settings.db_path} not counted ({exc})")
    finally:
        app.close()


def database_files(settings: Settings) -> list[tuple[str, Path]]:
    """(role, path) of every existing database file Tideline owns for this agent and library."""
    found = [(AGENT_DATABASE, settings.db_path)] if settings.db_path.exists() else []
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


def _probe_databases(report: Report, settings: Settings) -> None:
    report.files = check_databases(settings)
    for check in report.files:
        hint = REPAIR_HINT if check.role == AGENT_DATABASE else INDEX_HINT
        report.problems += [f"{check.path} {problem}; {hint}" for problem in check.problems]


def run_doctor(settings: Settings) -> Report:
    """Check everything Tideline needs; never raises."""
    report = Report()
    report.facts["python"] = platform.python_version()
    from tideline import __version__

    report.facts["tideline"] = __version__
    _probe_sqlite(report)
    _probe_embedder(report, settings)
    _probe_home(report, settings)
    _probe_databases(report, settings)
    _probe_vectors(report, settings)
    return report
