"""`tideline doctor --repair`: replace each damaged database by what can be recovered from it.

The agent database is the only copy of a memory, so it is never deleted or written: its readable
rows are salvaged (`tideline.store.copy_rows`) into a new file built by the current migrations,
the search side tables are rebuilt from those rows (FTS from the texts; vectors copied where
they can still be read, otherwise `tideline embed` fills them in), the new file is checked, and
only then does it take the old one's place. The old file (with its log) is kept next to it as
`memory.db.damaged-<UTC time>`. A library index is derived from the notes, so a damaged one is set
aside the same way and rebuilt by the next `memo` command.

Stop the MCP server and watchers first: a process that has the old file open keeps writing to it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from tideline.app import Tideline
from tideline.clock import system_clock
from tideline.config import Settings
from tideline.errors import RepairFailed, TidelineError
from tideline.memory import NARRATIVE_INDEX, TURN_INDEX, Memory
from tideline.search import Policy, TextIndex, damaged_search_files
from tideline.store import (
    Database,
    Namespace,
    check_file,
    forget_damage,
    open_database,
    remembered_damage,
    shown_url,
)
from tideline.upkeep._doctor import (
    AGENT_DATABASE,
    MIGRATION_SETS,
    SEARCH_FILE,
    SEARCH_INDEXES,
    database_files,
)
from tideline.upkeep._pg_health import check_namespace
from tideline.upkeep._salvage import UNRECOVERABLE, Salvage, copy_rows, open_damaged

SEARCHED = {TURN_INDEX: "turns", NARRATIVE_INDEX: "narratives"}
#: Every table the agent database can hold: only tables of the new file are copied into it.
TABLES = MIGRATION_SETS
REINDEX_BATCH = 2000
NO_VECTORS = (
    "vectors are not read from a file whose list of tables SQLite cannot read; "
    "`tideline embed` makes them again"
)
SIDE_FILES = ("-wal", "-shm", ".damage.json", ".checked.json")


@dataclass
class Repaired:
    """What `--repair` did to one file."""

    path: str
    role: str
    action: str  # healthy | recovered | set aside | rebuilt (PostgreSQL) | failed
    kept: str | None = None
    damage: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    lost: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.action != "failed"

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ok": self.ok}


def repair(settings: Settings) -> list[Repaired]:
    """Repair every damaged database file `doctor` knows of (healthy files are left alone),
    and on PostgreSQL rebuild the namespace's missing indexes and vectors."""
    done = [repair_postgres(settings)] if settings.database_url else []
    for role, path in database_files(settings):
        damage = check_file(path)
        if not damage and role == AGENT_DATABASE and (noted := remembered_damage(path)):
            damage = [noted]
        result = Repaired(str(path), role, "healthy", damage=damage)
        if damage:
            try:
                if role == AGENT_DATABASE:
                    _recover(path, result)
                else:
                    result.kept, result.action = str(_set_aside(path)), "set aside"
                    result.notes.append("rebuilt from the notes by the next memo command")
            except (TidelineError, OSError, apsw.Error) as exc:
                result.action, result.error = "failed", " ".join(str(exc).split())
        done.append(result)
        if role == AGENT_DATABASE and result.ok:
            done += _rebuild_search_files(settings, path)
    return done


def _rebuild_search_files(settings: Settings, path: Path) -> list[Repaired]:
    """Delete each damaged vector or lexical file beside the agent database and build the
    files again from the database (they hold nothing else)."""
    found = damaged_search_files(path, SEARCH_INDEXES, discard=True)
    if not found:
        return []
    done = [Repaired(str(folder), SEARCH_FILE, "rebuilt", damage=[p]) for folder, p in found]
    app = Tideline(settings)
    try:
        built = app.memory.build_search_files()
        note = f"damaged, deleted; {built} search files built again from the database"
    except (TidelineError, OSError, apsw.Error) as exc:
        note = f"damaged, deleted; built again by the server or `tideline embed` ({exc})"
    finally:
        app.close()
    for result in done:
        result.notes.append(note)
    return done


def repair_postgres(settings: Settings) -> Repaired:
    """Build the namespace's missing GIN and HNSW indexes and embed its live rows that have no
    vector; nothing else changes (the rows are the server's to keep: back it up with pg_dump)."""
    namespace = Namespace(settings.agent_name, settings.database_user or None)
    result = Repaired(
        f"{shown_url(settings.database_url)} ({namespace.schema})", AGENT_DATABASE, "healthy"
    )
    app = Tideline(settings)
    try:
        before = check_namespace(settings.database_url, namespace.schema).indexes
        for part in (app.memory.raw, app.memory.narratives):
            part.index.restore_indexes()
        after = check_namespace(settings.database_url, namespace.schema).indexes
        result.notes += [f"index {name} built" for name in sorted(set(after) - set(before))]
        if app.memory.pending_vectors():
            result.notes.append(f"{app.memory.embed_pending()} missing vectors embedded")
    except TidelineError as exc:
        result.action, result.error = "failed", " ".join(str(exc).split())
    finally:
        app.close()
    if result.notes and result.ok:
        result.action = "rebuilt"
    return result


def _stamped(path: Path) -> Path:
    stamp = system_clock().strftime("%Y%m%dT%H%M%SZ")  # a file name: no colons
    for n in range(1000):
        kept = path.with_name(f"{path.name}.damaged-{stamp}" + (f"-{n}" if n else ""))
        if not kept.exists():
            return kept
    raise RepairFailed(f"too many damaged copies of {path}; move the old ones away and retry")


def _set_aside(path: Path, replacement: Path | None = None) -> Path:
    """Keep `path` (and its log) under a stamped name; put `replacement` in its place atomically."""
    kept = _stamped(path)
    os.link(path, kept)  # the old file stays reachable at every moment
    for suffix in SIDE_FILES:  # a log must never be applied to the new file
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{path}{suffix}", f"{kept}{suffix}")
    if replacement is not None:
        os.replace(replacement, path)
    else:
        path.unlink()
    return kept


def _remove(path: Path) -> None:
    """A database file of the repair's own and its side files (a failed repair leaves none)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()


def _recover(path: Path, result: Repaired) -> None:
    new = path.with_name(f".{path.name}.repaired")
    _remove(new)
    try:
        salvage = _salvage_into(path, new, result)
    except BaseException:
        _remove(new)
        raise
    result.rows = {t: s.copied for t, s in salvage.tables.items() if s.copied}
    never = _never_had(salvage.migrated)
    result.lost = {t: s.damage for t, s in salvage.tables.items() if s.damage and t not in never}
    if salvage.header_rebuilt:
        result.notes.append("its header was rebuilt to read it")
    if salvage.schema_pages:
        result.notes.append(
            f"its list of tables was lost with page 1 and found again on {salvage.schema_pages} "
            "other pages"
        )
    result.kept, result.action = str(_set_aside(path, new)), "recovered"
    forget_damage(path)
    open_database(path, *TABLES).close()  # the re-check: it opens as a memory again


def _never_had(migrated: set[str] | None) -> set[str]:
    """The tables of migration sets the damaged file never applied (none of its rows can be
    lost: the sleep's and the dream's tables come with their first run)."""
    if migrated is None:
        return set()
    never: set[str] = set()
    with open_database(":memory:") as db:
        for m in TABLES:
            before = {r[0] for r in db.execute("SELECT name FROM sqlite_schema")}
            m.apply(db)
            if m.name not in migrated:
                never |= {r[0] for r in db.execute("SELECT name FROM sqlite_schema")} - before
    return never


def _salvage_into(path: Path, new: Path, result: Repaired) -> Salvage:
    """Every readable row of `path` copied into the new file `new`, which is checked."""
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".repair-") as work:
        src: apsw.Connection | None = None
        salvage = Salvage()
        if path.stat().st_size:
            src, salvage = open_damaged(path, Path(work))
        else:
            result.notes.append("it was empty: nothing to recover, a new memory starts here")
        try:
            with open_database(new, *TABLES) as db:
                if src is not None:
                    copy_rows(src, db, salvage)
                    TextIndex.forget_spaces(db)  # bound again by _copy_vectors
                    salvage.tables.pop("vector_spaces", None)
                    _reindex_text(db)
                    result.notes += (
                        _copy_vectors(src, db) if salvage.pages is None else [NO_VECTORS]
                    )
                after = [r[0] for r in db.execute("PRAGMA quick_check")]
        finally:
            if src is not None:
                src.close()
    if after != ["ok"]:
        raise RepairFailed(
            f"the copy recovered from {path} still fails quick_check ({after[0]}); {UNRECOVERABLE}"
        )
    return salvage


def _reindex_text(db: Database) -> None:
    """Full-text tables from the recovered rows (nothing is bound to vectors yet, so
    `texts_without_vectors` lists every row with its text as search sees it)."""
    # indexes texts: stamps nothing and searches nothing (so any policies do)
    memory = Memory(db, None, narrative_policy=Policy(), turn_policy=Policy(), clock=system_clock)
    for part in (memory.raw, memory.narratives):
        items = part.texts_without_vectors()
        for start in range(0, len(items), REINDEX_BATCH):
            part.index.upsert_many(items[start : start + REINDEX_BATCH])


def _copy_vectors(src: apsw.Connection, db: Database) -> list[str]:
    """Vectors that can still be read, for the rows that were recovered; the rest are embedded
    again by `tideline embed`."""
    notes = []
    for name, table in SEARCHED.items():
        try:
            space, vectors = TextIndex.stored_vectors(src, name)
        except apsw.Error as exc:
            notes.append(f"{name} vectors unreadable ({exc}); run `tideline embed`")
            continue
        if space is None:
            continue
        alive = {r[0] for r in db.execute(f"SELECT id FROM {table}")}
        index = TextIndex(db, name)
        if not index.bind_vectors(*space) and not index.has_vectors:
            notes.append(f"{name} vectors not copied (sqlite-vec is off); run `tideline embed`")
            continue
        index.set_vectors((i, v) for i, v in vectors.items() if i in alive)
    return notes
