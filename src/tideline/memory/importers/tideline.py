"""A Tideline export (`tideline export`, JSONL) read back: the backup restored.

Sessions keep their key, source and title; turns their role, speaker, text, time, external id
and stored hash (so restoring twice adds nothing) and tombstones stay tombstones. Narratives and
the profile's records are handed on and restored as stored (`restore_narratives`, the
profile's `restore`, which says which kinds it takes back).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tideline.clock import parse_time
from tideline.errors import InvalidInput
from tideline.memory._backup import EXPORT_TYPE, EXPORT_VERSION, READABLE_VERSIONS
from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportProblem
from tideline.memory.importers._importer import (
    ImportBatch,
    ImportedSession,
    as_dict,
    first_json_line,
    json_lines,
)


class TidelineImporter:
    name = "tideline"
    description = "a Tideline export (tideline export --format jsonl): the backup restored"

    def sniff(self, head: str) -> int:
        line = first_json_line(head)
        return 100 if isinstance(line, dict) and line.get("type") == EXPORT_TYPE else 0

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        sessions: dict[str, ImportedSession] = {}
        listed: dict[str, Any] | None = None
        held: Counter[str] = Counter()
        for number, record in json_lines(path, batch):
            kind = record.get("type") if isinstance(record, dict) else None
            if number == 1 or kind == EXPORT_TYPE:
                if kind != EXPORT_TYPE or record.get("version") not in READABLE_VERSIONS:
                    batch.problems.append(
                        ImportProblem(
                            number,
                            f"not a version {EXPORT_VERSION} Tideline export; "
                            "export it again with this version of tideline",
                        )
                    )
                    return batch
                listed = as_dict(record.get("counts")) if "counts" in record else None
                continue
            if isinstance(kind, str):
                held[kind] += 1
            problem = None
            if kind == "session":
                problem = _session(record, sessions)
            elif kind == "turn":
                problem = _turn(number, record, sessions)
            elif kind == "narrative":
                batch.narratives.append({**record, "_line": number})
            elif isinstance(kind, str):
                batch.profile.append({**record, "_line": number})
            else:
                problem = "not a record with a 'type'"
            if problem is not None:
                batch.problems.append(ImportProblem(number, problem))
        batch.sessions = list(sessions.values())
        if listed is not None and dict(held) != listed:
            missing = ", ".join(
                f"{listed.get(k, 0)} {k} listed, {held.get(k, 0)} found"
                for k in sorted(set(listed) | set(held))
                if listed.get(k, 0) != held.get(k, 0)
            )
            batch.problems.append(
                ImportProblem(
                    None,
                    f"{path.name} does not hold what its first line lists ({missing}): it was "
                    "cut short or edited; what it holds is restored, export again for the rest",
                )
            )
        return batch


def _session(record: dict[str, Any], sessions: dict[str, ImportedSession]) -> str | None:
    """A session record into `sessions` by its key, or what is wrong with it."""
    key = record.get("key")
    if not isinstance(key, str) or not key:
        return "session without a 'key'"
    forgotten = record.get("forgotten_at")
    try:
        created_at = parse_time(record.get("created_at"), "created_at")
    except InvalidInput as exc:
        return f"session {key[:80]!r}: {exc}"
    sessions[key] = ImportedSession(
        key,
        [],
        record.get("title") if isinstance(record.get("title"), str) else None,
        source=str(record.get("source") or "tideline"),
        created_at=created_at,
        forgotten=(str(forgotten), record.get("forgotten_why")) if forgotten else None,
    )
    return None


def _turn(number: int, record: dict[str, Any], sessions: dict[str, ImportedSession]) -> str | None:
    """A turn record (line `number`) onto its session, listed before it, or what is wrong."""
    session = sessions.get(record.get("session"))  # type: ignore[arg-type]
    if session is None:
        return f"turn of session {record.get('session')!r}, not listed before it"
    forgotten = record.get("forgotten_at")
    session.turns.append(
        NewTurn(
            role=record.get("role"),  # type: ignore[arg-type]
            text=record.get("text"),  # type: ignore[arg-type]
            speaker=record.get("speaker"),
            timestamp=record.get("ts"),
            external_id=record.get("external_id"),
            digest=record.get("hash"),
            forgotten=(str(forgotten), record.get("forgotten_why")) if forgotten else None,
        )
    )
    session.origins.append(number)
    return None
