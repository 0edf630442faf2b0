"""OpenAI-style chat: a JSON array of `{role, content}` (or `{"messages": [...]}`), or JSONL of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tideline.memory._raw import NewTurn
from tideline.memory._types import ImportProblem
from tideline.memory.importers._base import (
    NOT_JSON,
    ImportBatch,
    ImportedSession,
    content_text,
    json_lines,
    parse_json,
    read_text,
)


class OpenAIChatImporter:
    name = "openai"
    description = (
        "OpenAI-style chat messages: JSON array / {messages: [...]} or JSONL, one message a line"
    )

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
        for number, msg in items:
            if not isinstance(msg, dict) or "role" not in msg:
                batch.problems.append(ImportProblem(number, "not a message object with a role"))
                continue
            body = content_text(msg.get("content"))
            if not body.strip():
                batch.skipped += 1
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
        if turns:
            batch.sessions.append(
                ImportedSession(f"{self.name}/{path.stem}", turns, title=path.stem)
            )
        return batch
