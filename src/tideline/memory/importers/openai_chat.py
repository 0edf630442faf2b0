"""OpenAI-style chat: a JSON array of `{role, content}` (or `{"messages": [...]}`), or JSONL of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportProblem
from tideline.memory.importers._importer import (
    NOT_JSON,
    ImportBatch,
    ImportedSession,
    Origin,
    content_text,
    first_json_line,
    json_lines,
    parse_json,
    read_text,
)


class OpenAIChatImporter:
    name = "openai"
    description = (
        "OpenAI-style chat messages: JSON array / {messages: [...]} or JSONL, one message a line"
    )

    def sniff(self, head: str) -> int:
        """A JSON array or JSONL of `{role, content}`, or `{"messages": [...]}`."""
        start = head.lstrip()[:200]
        if start.startswith("[") and '"role"' in start:
            return 50
        if start.startswith("{") and start[1:].lstrip().startswith('"messages"'):
            return 50
        line = first_json_line(head)
        return 50 if isinstance(line, dict) and "role" in line and "content" in line else 0

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        items: list[tuple[int | None, Any]]
        text = read_text(path)
        stripped = text.lstrip()
        if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in stripped.strip()):
            data = parse_json(text, batch)
            if data is NOT_JSON:
                return batch
            messages = data.get("messages", []) if isinstance(data, dict) else data
            items = [(None, m) for m in messages] if isinstance(messages, list) else []
        else:
            items = list(json_lines(path, batch))
        turns = []
        origins: list[Origin] = []
        for index, (number, msg) in enumerate(items, 1):
            origin: Origin = number if number is not None else f"message {index}"
            if not isinstance(msg, dict) or "role" not in msg:
                where = "" if number is not None else f"message {index}: "
                batch.problems.append(
                    ImportProblem(number, f"{where}not a message object with a role")
                )
                continue
            body = content_text(msg.get("content"))
            if not body.strip():
                batch.skip("messages without text")
                continue
            turns.append(
                NewTurn(
                    role=str(msg["role"]),
                    text=body,
                    speaker=msg.get("name"),
                    timestamp=msg.get("timestamp") or msg.get("created_at"),
                    external_id=str(msg["id"]) if msg.get("id") is not None else None,
                )
            )
            origins.append(origin)
        if turns:
            batch.sessions.append(
                ImportedSession(f"{self.name}/{path.stem}", turns, path.stem, origins)
            )
        return batch
