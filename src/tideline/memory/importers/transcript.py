"""Agent transcripts (JSONL): one message a line with a role or type, content and a timestamp.

Accepts the common shapes: `{"role": ..., "content": ...}` and
`{"type": "user"|"assistant", "message": {"role": ..., "content": [...]}, "timestamp": ...,
"sessionId": ...}`. Content may be a string or a list of parts (only text parts are kept). Lines of
other types (summaries, snapshots, tool results without text) are skipped and counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tideline.memory._raw import NewTurn
from tideline.memory.importers._importer import (
    ImportBatch,
    ImportedSession,
    Origin,
    content_text,
    first_json_line,
    json_lines,
)

_ROLES = {"user", "assistant", "system", "tool"}


class TranscriptImporter:
    name = "transcript"
    description = "agent transcript JSONL: one message a line (role/type, content, timestamp)"

    def sniff(self, head: str) -> int:
        """JSONL whose first line names a session, a line type or a nested message."""
        line = first_json_line(head)
        if not isinstance(line, dict):
            return 0
        if "sessionId" in line or "session_id" in line or isinstance(line.get("message"), dict):
            return 60
        return 60 if line.get("type") in (*_ROLES, "summary") else 0

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        sessions: dict[str, list[NewTurn]] = {}
        origins: dict[str, list[Origin]] = {}
        for number, line in json_lines(path, batch):
            if not isinstance(line, dict):
                batch.skip("lines that are not messages")
                continue
            nested = line.get("message")
            message: dict[str, Any] = nested if isinstance(nested, dict) else line
            role = message.get("role") or line.get("role") or line.get("type")
            if not isinstance(role, str) or role not in _ROLES:
                batch.skip("lines that are not messages")
                continue
            body = content_text(message.get("content"))
            if not body.strip():
                batch.skip("messages without text")
                continue
            key = str(line.get("sessionId") or line.get("session_id") or path.stem)
            origins.setdefault(key, []).append(number)
            sessions.setdefault(key, []).append(
                NewTurn(
                    role=role,
                    text=body,
                    speaker=line.get("name") or message.get("name"),
                    timestamp=line.get("timestamp"),
                    external_id=str(line["uuid"]) if line.get("uuid") else f"line-{number}",
                )
            )
        batch.sessions = [
            ImportedSession(f"{self.name}/{key}", turns, key, origins[key])
            for key, turns in sessions.items()
        ]
        return batch
