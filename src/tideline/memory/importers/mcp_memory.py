"""The MCP reference memory server's knowledge graph (`memory.jsonl`, formerly `memory.json`).

One JSON object a line, as the server's `saveGraph` writes them:
`{"type": "entity", "name", "entityType", "observations": [...]}` and
`{"type": "relation", "from", "to", "relationType"}` (relations in active voice: "works_at").
A whole `{"entities": [...], "relations": [...]}` document (what `read_graph` returns) is read
the same way.

Every observation is a fact about its entity, and every relation one about its `from` entity:
each is stored as a turn of session `mcp-memory/<file name>` ("Alice (person): Speaks Spanish",
"Alice works at Acme") and kept in the profile as a fact (subject the entity, category its type
or the relation) with that turn as evidence. The graph carries no times, so everything is dated
by the file's modification time: the server held all of it by then. An entity without
observations is left out and counted. Re-importing a graph that grew adds only what is new (a
turn's identity does not include the time the file gave it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportedFact, ImportProblem
from tideline.memory.importers._importer import (
    NOT_JSON,
    SNIFF_CHARS,
    ImportBatch,
    ImportedSession,
    Origin,
    as_list,
    file_time,
    first_json_line,
    json_lines,
    open_text,
    parse_json,
    read_text,
)

_KINDS = ("entity", "relation")


class MCPMemoryImporter:
    name = "mcp-memory"
    description = "the MCP reference memory server's knowledge graph (memory.jsonl / memory.json)"

    def sniff(self, head: str) -> int:
        line = first_json_line(head)
        if isinstance(line, dict) and line.get("type") in _KINDS:
            return 95 if "entityType" in line or "relationType" in line else 0
        start = head.lstrip()[:200]
        return 70 if start.startswith("{") and '"entities"' in start else 0

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        records: list[tuple[Origin, Any]]
        if _one_document(path):
            records = self._document(path, batch)
        else:
            records = list(json_lines(path, batch))
        session = ImportedSession(f"{self.name}/{path.stem}", [], path.stem)
        session.created_at = file_time(path)
        for origin, record in records:
            self._record(origin, record, session, batch)
        if session.turns:
            batch.sessions.append(session)
        return batch

    @staticmethod
    def _document(path: Path, batch: ImportBatch) -> list[tuple[Origin, Any]]:
        """The records of a `{"entities": [...], "relations": [...]}` document."""
        data = parse_json(read_text(path), batch)
        if data is NOT_JSON:
            return []
        if not isinstance(data, dict):
            batch.problems.append(ImportProblem(None, "not a knowledge graph: expected objects"))
            return []
        found: list[tuple[Origin, Any]] = []
        for kind in _KINDS:
            for n, item in enumerate(as_list(data.get(f"{kind}s")), 1):
                found.append(
                    (f"{kind} {n}", {"type": kind, **item} if isinstance(item, dict) else item)
                )
        return found

    def _record(
        self, origin: Origin, record: Any, session: ImportedSession, batch: ImportBatch
    ) -> None:
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "entity":
            self._entity(origin, record, session, batch)
        elif kind == "relation":
            self._relation(origin, record, session, batch)
        else:
            batch.skip("lines that are neither entities nor relations")

    @staticmethod
    def _entity(
        origin: Origin, record: dict[str, Any], session: ImportedSession, batch: ImportBatch
    ) -> None:
        name, kind, observations = (
            record.get("name"),
            record.get("entityType"),
            record.get("observations"),
        )
        if not (isinstance(name, str) and isinstance(kind, str) and isinstance(observations, list)):
            _problem(
                origin,
                "an entity needs a 'name', an 'entityType' and a list of 'observations'",
                batch,
            )
            return
        if not observations:
            batch.skip("entities without observations")
        for said in observations:
            if not isinstance(said, str) or not said.strip():
                batch.skip("observations that are not text")
                continue
            _add(session, f"{name} ({kind}): {said}", origin, ImportedFact(name, kind, said))

    @staticmethod
    def _relation(
        origin: Origin, record: dict[str, Any], session: ImportedSession, batch: ImportBatch
    ) -> None:
        source, target, kind = record.get("from"), record.get("to"), record.get("relationType")
        if not all(isinstance(v, str) and v.strip() for v in (source, target, kind)):
            _problem(origin, "a relation needs 'from', 'to' and 'relationType' texts", batch)
            return
        text = f"{source} {str(kind).replace('_', ' ')} {target}"
        _add(session, text, origin, ImportedFact(str(source), str(kind), str(target)))


def _one_document(path: Path) -> bool:
    """Whether the file is one `{"entities": …}` document rather than a record a line."""
    with open_text(path) as fh:
        head = fh.read(SNIFF_CHARS)
    first = first_json_line(head)
    if not head.lstrip().startswith("{"):
        return False
    return first is None or (isinstance(first, dict) and "type" not in first)


def _add(session: ImportedSession, text: str, origin: Origin, fact: ImportedFact) -> None:
    session.facts.append((len(session.turns), fact))
    session.turns.append(NewTurn(role="assistant", text=text))
    session.origins.append(origin)


def _problem(origin: Origin, why: str, batch: ImportBatch) -> None:
    if isinstance(origin, int):
        batch.problems.append(ImportProblem(origin, why))
    else:
        batch.problems.append(ImportProblem(None, f"{origin}: {why}"))
