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
from tideline.memory.importers._base import ImportBatch, ImportedSession, content_text, json_lines

_ROLES = {"user", "assistant", "system", "tool"}


class TranscriptImporter:
    name = "transcript"
    description = "agent transcript JSONL: one message a line (role/type, content, timestamp)"

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        sessions: dict[str, list[NewTurn]] = {}
        for number, line in json_lines(path, batch):
            if not isinstance(line, dict):
                batch.skipped += 1
                continue
            nested = line.get("message")
            message: dict[str, Any] = nested if isinstance(nested, dict) else line
            role = message.get("role") or line.get("role") or line.get("type")
            if not isinstance(role, str) or role not in _ROLES:
                batch.skipped += 1
                continue
            body = content_text(message.get("content"))
            if not body.strip():
                batch.skipped += 1
                continue
            key = str(line.get("sessionId") or line.get("session_id") or path.stem)
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
            ImportedSession(f"{self.name}/{key}", turns, title=key)
            for key, turns in sessions.items()
        ]
        return batch
