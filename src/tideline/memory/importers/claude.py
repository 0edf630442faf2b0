"""The Claude.ai data export: `conversations.json`, a list of conversations.

A conversation is `{uuid, name, created_at, chat_messages: [...]}`; a message is `{uuid, sender
("human" | "assistant"), text, content: [{type, text, …}], created_at, attachments, files}`.
The text parts of `content` are the message (its flat `text` when there are none); tool calls,
tool results, thinking and images are left out and counted, as are attachments and files (their
text is a document, not something said). Each conversation becomes session `claude/<uuid>`; the
message uuid is the turn's external id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportProblem
from tideline.memory.importers._importer import (
    ImportBatch,
    ImportedSession,
    Origin,
    as_list,
    place,
)
from tideline.memory.importers._stream import read_conversations

_ROLES = {"human": "user", "assistant": "assistant"}


class ClaudeImporter:
    name = "claude"
    description = "the Claude.ai data export's conversations.json"

    def sniff(self, head: str) -> int:
        return 90 if head.lstrip().startswith("[") and '"chat_messages"' in head else 0

    def read(self, path: Path) -> ImportBatch:
        return read_conversations(path, "Claude", "chat_messages", self._conversation)

    def _conversation(self, number: int, conv: Any, batch: ImportBatch) -> None:
        if not isinstance(conv, dict) or not isinstance(conv.get("chat_messages"), list):
            batch.problems.append(
                ImportProblem(None, f"conversation {number}: no 'chat_messages' list")
            )
            return
        name = conv.get("name") if isinstance(conv.get("name"), str) and conv["name"] else None
        where = place(number, name)
        turns: list[NewTurn] = []
        origins: list[Origin] = []
        for index, message in enumerate(conv["chat_messages"], 1):
            if not isinstance(message, dict):
                batch.problems.append(
                    ImportProblem(None, f"{where} message {index}: not an object")
                )
                continue
            turn = self._turn(message, batch)
            if turn is not None:
                turns.append(turn)
                origins.append(f"{where} message {index}")
        if turns:
            key = conv.get("uuid") or f"conversation-{number}"
            batch.sessions.append(ImportedSession(f"claude/{key}", turns, name, origins))

    def _turn(self, message: dict[str, Any], batch: ImportBatch) -> NewTurn | None:
        for extra in ("attachments", "files"):
            if isinstance(message.get(extra), list) and message[extra]:
                batch.skip(extra, len(message[extra]))
        parts = as_list(message.get("content"))
        texts = [
            str(p.get("text") or "")
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text"
        ]
        others = len(parts) - len(texts)
        if others:
            batch.skip("non-text parts", others)
        text = "\n".join(t for t in texts if t.strip())
        if not text.strip() and isinstance(message.get("text"), str):
            text = message["text"]
        if not text.strip():
            if not others:
                batch.skip("messages without text")
            return None
        sender = message.get("sender")
        return NewTurn(
            role=_ROLES.get(sender, sender) if isinstance(sender, str) else repr(sender),
            text=text,
            timestamp=message.get("created_at"),
            external_id=str(message["uuid"]) if message.get("uuid") else None,
        )
