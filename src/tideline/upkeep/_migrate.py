"""`tideline migrate`: move an agent database between SQLite and a PostgreSQL namespace.

Both ends are opened with the agent's migration sets (memory, analysis, profile), so they have
the same tables. Then, each step resumable (run the command again after an interruption):
1. every row of every table, by the store (`tideline.store.copy_table`);
2. the text index of turns and narratives, rebuilt by their owners from the copied texts;
3. the vectors, copied as stored (no re-embedding), in the same vector space (model, dimension).
Finally both ends are counted and hashed (`tideline.store.digest` for rows, a SHA-256 over
(id, float32 bytes) for vectors): the report says per table whether the copy is faithful.
Tables a service creates when it first runs (session summaries, DREAM) are copied when the
target already has them, and otherwise named as skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tideline.analysis import ANALYSIS_MIGRATIONS
from tideline.clock import system_clock
from tideline.errors import InvalidInput
from tideline.memory import AGENT_MIGRATIONS, NARRATIVE_INDEX, TURN_INDEX, Memory
from tideline.profile import PROFILE_MIGRATIONS
from tideline.search import IndexBase, Policy, open_index
from tideline.store import (
    Database,
    Migrations,
    Namespace,
    Storage,
    is_postgres_url,
    open_database,
    open_postgres,
    shown_url,
)
from tideline.upkeep._copy import TableCopy, copy_table, digest, table_shapes

#: The agent database's migration sets, in the order the app opens them.
AGENT_SETS: tuple[Migrations, ...] = (AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS, PROFILE_MIGRATIONS)
VECTOR_BATCH = 1000
#: Vectors from which a copy into PostgreSQL builds the HNSW index once, after the copy.
ANN_AFTER = 1_000
TEXT_BATCH = 2000

#: Called with one line of progress (the CLI prints it on stderr).
Progress = Callable[[str], None]


@dataclass
class IndexCopy:
    """One search index after the move: vectors on both ends and their digests."""

    index: str
    space: str | None = None
    texts_indexed: int = 0
    vectors_copied: int = 0
    source_vectors: int = 0
    target_vectors: int = 0
    source_sha256: str = ""
    target_sha256: str = ""

    @property
    def ok(self) -> bool:
        return (self.source_vectors, self.source_sha256) == (
            self.target_vectors,
            self.target_sha256,
        )


@dataclass
class MoveReport:
    """What a move copied and whether both ends now agree."""

    source: str
    target: str
    tables: list[TableCopy] = field(default_factory=list)
    indexes: list[IndexCopy] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tables) and all(i.ok for i in self.indexes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "source": self.source,
            "target": self.target,
            "tables": [{**asdict(t), "ok": t.ok} for t in self.tables],
            "indexes": [{**asdict(i), "ok": i.ok} for i in self.indexes],
            "skipped": self.skipped,
        }


def migrate(
    target: str,
    source: str,
    namespace: Namespace,
    progress: Progress | None = None,
    *,
    batch: int = 2000,
) -> MoveReport:
    """Copy the agent database at `source` to `target`: an SQLite path to a postgresql:// URL
    (into `namespace`), or a URL back to a path; `batch` rows per transaction."""
    say = progress or (lambda _line: None)
    if is_postgres_url(target) == is_postgres_url(source):
        raise InvalidInput(
            f"migrate copies between SQLite and PostgreSQL, but got {shown_url(source)} and"
            f" {shown_url(target)}; pass --to postgresql://… with an SQLite --from, or the reverse"
        )
    if not is_postgres_url(source) and not Path(source).is_file():
        raise InvalidInput(f"no agent database at {source}; pass --from PATH to its memory.db")
    src, dst, lite = _open(source, target, namespace)
    try:
        report = MoveReport(_shown(source, namespace), _shown(target, namespace))
        _copy_tables(src, dst, lite, report, say, batch)
        report.indexes = [
            _copy_index(src, dst, name, say) for name in (TURN_INDEX, NARRATIVE_INDEX)
        ]
        say("checking the copy")
        for item in report.indexes:
            item.source_vectors, item.source_sha256 = _vector_digest(open_index(src, item.index))
            item.target_vectors, item.target_sha256 = _vector_digest(open_index(dst, item.index))
        return report
    finally:
        src.close()
        dst.close()


def _open(source: str, target: str, namespace: Namespace) -> tuple[Storage, Storage, Database]:
    """The source, then the target (a source that cannot be opened leaves no target file), and
    which of the two is the SQLite database (its tables say what there is to copy)."""
    if is_postgres_url(source):
        src: Storage = open_postgres(source, namespace, *AGENT_SETS)
        try:
            lite = open_database(target, *AGENT_SETS)
        except BaseException:
            src.close()
            raise
        return src, lite, lite
    lite = open_database(source, *AGENT_SETS)
    try:
        dst = open_postgres(target, namespace, *AGENT_SETS)
    except BaseException:
        lite.close()
        raise
    return lite, dst, lite


def _shown(location: str, namespace: Namespace) -> str:
    if is_postgres_url(location):
        return f"{shown_url(location)} (namespace {namespace.schema})"
    return location


def _copy_tables(
    src: Storage, dst: Storage, lite: Database, report: MoveReport, say: Progress, batch: int
) -> None:
    for shape in table_shapes(lite):
        if not (src.table_exists(shape.name) and dst.table_exists(shape.name)):
            report.skipped.append(
                f"{shape.name}: not on both ends (its service creates it when it first runs there)"
            )
            continue
        copied = copy_table(
            src,
            dst,
            shape,
            batch=batch,
            progress=lambda t, n, total: say(f"{t}: {n:,}/{total:,} rows"),
        )
        copied.source_rows, copied.source_sha256 = digest(src, shape)
        copied.target_rows, copied.target_sha256 = digest(dst, shape)
        report.tables.append(copied)


def _copy_index(src: Storage, dst: Storage, name: str, say: Progress) -> IndexCopy:
    """The owners' texts into the target's index, then the source's vectors as they are."""
    result = IndexCopy(name)
    # copies texts: stamps nothing and searches nothing (so any policies do)
    memory = Memory(dst, None, narrative_policy=Policy(), turn_policy=Policy(), clock=system_clock)
    owner = memory.raw if name == TURN_INDEX else memory.narratives
    have = owner.index.text_ids()
    missing = [i for i in owner.ids() if i not in have]
    for start in range(0, len(missing), TEXT_BATCH):
        part = missing[start : start + TEXT_BATCH]
        found = owner.texts(part)
        # a turn's lexical key holds its day and its neighbours' words, as where it came from
        keys = memory.raw.lexical_keys(part) if name == TURN_INDEX else None
        owner.index.upsert_many(sorted(found.items()), keys)
        result.texts_indexed += len(found)
        say(f"{name}: {result.texts_indexed:,}/{len(missing):,} texts indexed")
    source_index = open_index(src, name)
    space = source_index.space
    if space is None:
        return result
    result.space = f"{space[0]} ({space[1]} dimensions)"
    owner.index.bind_vectors(*space)
    done = owner.index.vector_ids()
    todo = sorted(source_index.vector_ids() - done)
    # one approximate-neighbour build after the copy (PostgreSQL's HNSW), not one per vector
    paused = len(todo) > ANN_AFTER and owner.index.pause_ann()
    for start in range(0, len(todo), VECTOR_BATCH):
        part = todo[start : start + VECTOR_BATCH]
        owner.index.set_vectors(source_index.vectors_of(part).items())
        result.vectors_copied += len(part)
        say(f"{name}: {result.vectors_copied:,}/{len(todo):,} vectors copied")
    if paused:
        say(f"{name}: building the HNSW index")
        owner.index.set_ann(True)
    return result


def _vector_digest(index: IndexBase) -> tuple[int, str]:
    """(records with a vector, SHA-256 over each record's id and float32 parts, by id)."""
    ids = sorted(index.vector_ids())
    sha = hashlib.sha256()
    for start in range(0, len(ids), VECTOR_BATCH):
        part: Sequence[int] = ids[start : start + VECTOR_BATCH]
        found = index.vectors_of(part)
        for i in part:
            sha.update(i.to_bytes(8, "big", signed=True))
            sha.update(found[i].astype("<f4").tobytes())
    return len(ids), sha.hexdigest()
