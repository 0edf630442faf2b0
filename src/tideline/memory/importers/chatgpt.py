"""The ChatGPT data export: `conversations.json`, a list of conversations.

Each conversation has a `title`, a `create_time` (seconds since 1970) and a `mapping` of nodes
`{id: {message, parent, children}}`: a tree, because every edited prompt and regenerated answer
starts a branch. What the person last saw is the branch from the root to `current_node`, so that
is what is imported (without `current_node`, the newest child at each step). A message is
`{id, author: {role, name}, create_time, content: {content_type, parts}, recipient, metadata}`.

Left out on purpose and counted: the messages of the other branches (a prompt edited away, an
answer regenerated: what the person said there is not in the branch they saw last, so the
summary says how many), system and tool messages, hidden messages (custom instructions),
assistant messages addressed to a tool (`recipient` other than "all"), messages whose content is
not text (code, browsing results, reasoning) and the non-text parts of a message (images, audio).
Each conversation becomes session `chatgpt/<conversation id>`; the message id is the turn's
external id, so re-importing a newer export adds only what is new.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tideline.clock import to_text
from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportProblem
from tideline.memory.importers._importer import (
    ImportBatch,
    ImportedSession,
    Origin,
    as_dict,
    as_list,
    place,
)
from tideline.memory.importers._stream import read_conversations

_TEXT_TYPES = ("text", "multimodal_text")
_SKIPPED_ROLES = ("system", "tool")
OTHER_BRANCHES = "messages on edited or regenerated branches"


def epoch_time(value: Any) -> str | None:
    """Seconds since 1970 → the stored form; text is passed on for the turn check to judge."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return to_text(dt.datetime.fromtimestamp(value, dt.UTC))
        except (OverflowError, OSError, ValueError):
            return f"{value!r} seconds since 1970"
    return str(value)


def branch(mapping: dict[str, Any], current: Any) -> list[str]:
    """Node ids from the root to `current` (or to the newest leaf when it is unknown)."""
    if isinstance(current, str) and current in mapping:
        return _walk(mapping, current, lambda node: node.get("parent"))[::-1]
    roots = [k for k, v in mapping.items() if as_dict(v).get("parent") not in mapping]
    return (
        _walk(mapping, roots[0], lambda node: (as_list(node.get("children")) or [None])[-1])
        if roots
        else []
    )


def _walk(mapping: dict[str, Any], start: str, step: Callable[[dict[str, Any]], Any]) -> list[str]:
    """Node ids from `start`, following `step` while it names a node not seen yet."""
    path: list[str] = []
    seen: set[str] = set()
    node: Any = start
    while isinstance(node, str) and node in mapping and node not in seen:
        seen.add(node)
        path.append(node)
        node = step(as_dict(mapping[node]))
    return path


def _messages(mapping: dict[str, Any], leave_out: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The (node id, message) pairs of the nodes not in `leave_out`."""
    found = []
    for node_id, node in mapping.items():
        message = as_dict(node).get("message")
        if node_id not in leave_out and isinstance(message, dict):
            found.append((node_id, message))
    return found


class ChatGPTImporter:
    name = "chatgpt"
    description = (
        "the ChatGPT data export's conversations.json (each conversation's current branch)"
    )

    def sniff(self, head: str) -> int:
        start = head.lstrip()
        if start.startswith(("[", "{")) and '"mapping"' in head and '"current_node"' in head:
            return 90
        return 0

    def read(self, path: Path) -> ImportBatch:
        return read_conversations(path, "ChatGPT", "mapping", self._conversation)

    def _conversation(self, number: int, conv: Any, batch: ImportBatch) -> None:
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            batch.problems.append(
                ImportProblem(None, f"conversation {number}: no 'mapping' of messages")
            )
            return
        title = conv.get("title") if isinstance(conv.get("title"), str) else None
        where = place(number, title)
        started = epoch_time(conv.get("create_time"))
        mapping: dict[str, Any] = conv["mapping"]
        turns: list[NewTurn] = []
        origins: list[Origin] = []
        shown = branch(mapping, conv.get("current_node"))
        for node_id in shown:
            node = mapping[node_id]
            message = node.get("message") if isinstance(node, dict) else None
            if not isinstance(message, dict):
                continue  # the root placeholder
            turn = self._turn(message, node_id, started, batch)
            if turn is not None:
                turns.append(turn)
                origins.append(f"{where} message {node_id}")
        elsewhere = sum(
            self._turn(message, node_id, started, ImportBatch()) is not None
            for node_id, message in _messages(mapping, set(shown))
        )
        if elsewhere:
            batch.skip(OTHER_BRANCHES, elsewhere)
        if turns:
            key = conv.get("conversation_id") or conv.get("id") or f"conversation-{number}"
            batch.sessions.append(ImportedSession(f"chatgpt/{key}", turns, title, origins))

    def _turn(
        self, message: dict[str, Any], node_id: str, started: str | None, batch: ImportBatch
    ) -> NewTurn | None:
        author = as_dict(message.get("author"))
        role = author.get("role")
        metadata = as_dict(message.get("metadata"))
        if role in _SKIPPED_ROLES:
            batch.skip("system and tool messages")
            return None
        if metadata.get("is_visually_hidden_from_conversation"):
            batch.skip("hidden messages")
            return None
        if message.get("recipient") not in (None, "all"):
            batch.skip("messages to a tool")
            return None
        content = as_dict(message.get("content"))
        kind = content.get("content_type", "text")
        if kind not in _TEXT_TYPES:
            batch.skip(f"{kind} messages")
            return None
        parts = as_list(content.get("parts"))
        text = "\n".join(p for p in parts if isinstance(p, str) and p.strip())
        others = sum(not isinstance(p, str) for p in parts)
        if others:
            batch.skip("non-text parts", others)
        if not text.strip():
            if not others:
                batch.skip("messages without text")
            return None
        return NewTurn(
            role=role if isinstance(role, str) else repr(role),
            text=text,
            speaker=author.get("name") if isinstance(author.get("name"), str) else None,
            timestamp=epoch_time(message.get("create_time")) or started,
            external_id=str(message.get("id") or node_id),
        )
