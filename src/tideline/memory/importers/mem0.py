"""A mem0 export: the memories mem0 kept, as its API and `get_all` return them.

A JSON list of `{id, memory, user_id, agent_id, run_id, hash, metadata, categories, created_at,
updated_at}` (or `{"results": [...]}` / `{"memories": [...]}` around it). Each memory is a fact
mem0 distilled from a conversation: it is stored as a turn of session `mem0/<user id>` (or
`mem0/<agent id>`, `mem0/<run id>`), role user for a user's memory and assistant for an agent's,
said at `created_at`, with the memory id as its external id; and kept in the profile as a fact
about the user ("self" for an agent's memory), its category mem0's first category (else
`metadata.category`, else "mem0"), with that turn as evidence. A memory mem0 later rewrote is
the rewritten text, still dated by when it was first made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportedFact, ImportProblem
from tideline.memory.importers._importer import (
    NOT_JSON,
    ImportBatch,
    ImportedSession,
    as_dict,
    as_list,
    parse_json,
    read_text,
)

_OWNERS = (
    ("user_id", "user", "user"),
    ("agent_id", "assistant", "self"),
    ("run_id", "user", "user"),
)


class Mem0Importer:
    name = "mem0"
    description = "a mem0 export: its JSON list of memories (memory, user_id, created_at, …)"

    def sniff(self, head: str) -> int:
        start = head.lstrip()
        if not start.startswith(("[", "{")) or '"memory"' not in head:
            return 0
        return 85 if any(f'"{key}"' in head for key, _, _ in _OWNERS) else 0

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        data = parse_json(read_text(path), batch)
        if data is NOT_JSON:
            return batch
        if isinstance(data, dict):
            data = data.get("results", data.get("memories"))
        if not isinstance(data, list):
            batch.problems.append(
                ImportProblem(None, "not a mem0 export: expected a list of memories")
            )
            return batch
        sessions: dict[str, ImportedSession] = {}
        for number, record in enumerate(data, 1):
            self._memory(number, record, sessions, batch)
        batch.sessions = list(sessions.values())
        return batch

    def _memory(
        self, number: int, record: Any, sessions: dict[str, ImportedSession], batch: ImportBatch
    ) -> None:
        where = f"memory {number}"
        text = record.get("memory") if isinstance(record, dict) else None
        if not isinstance(text, str) or not text.strip():
            batch.problems.append(ImportProblem(None, f"{where}: no 'memory' text"))
            return
        owner, role, subject = next(
            (
                (str(record[key]), role, subject)
                for key, role, subject in _OWNERS
                if record.get(key)
            ),
            ("memories", "user", "user"),
        )
        key = f"{self.name}/{owner}"
        session = sessions.setdefault(key, ImportedSession(key, [], owner))
        named = [c for c in as_list(record.get("categories")) if isinstance(c, str) and c.strip()]
        named.append(str(as_dict(record.get("metadata")).get("category") or "mem0"))
        fact = ImportedFact(subject, named[0], text)
        session.facts.append((len(session.turns), fact))
        session.turns.append(
            NewTurn(
                role=role,
                text=text,
                timestamp=record.get("created_at"),
                external_id=str(record["id"]) if record.get("id") else None,
            )
        )
        session.origins.append(where)
