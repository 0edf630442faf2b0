"""Letta's Agent File (`.af`): one or more agents with their memory blocks and messages.

The current schema is `{"agents": [{id, name, block_ids, messages: [...]}], "blocks": [{id,
label, value, description}], "tools": [...], …}`; the first one put an agent's fields at the
top, with its blocks in `core_memory` (or `memory_blocks`). A message is `{id, role, content:
[{type, text}] | text, created_at, tool_calls, …}`.

Each agent's messages become session `letta/<agent name>`, each said at its `created_at`:
user and assistant messages with their text (an assistant's words sent through the
`send_message` tool count as its text; a MemGPT user message wrapped as `{"type":
"user_message", "message": …}` is unwrapped). System and tool messages, heartbeats and system
alerts, and non-text parts (reasoning, images) are left out and counted. Each memory block
becomes a turn of session `letta/<agent name>/blocks` ("human: …"), and every line of it a fact
with that turn as evidence: about the user for the `human` block, about the agent itself
("self") for `persona` and the others, with the block's label as category. Blocks carry no
time: they are dated by the agent's latest message (else the file's modification time), as
they held then. Tools, the system prompt and model settings are configuration, not memory:
not imported.
"""

from __future__ import annotations

import json
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
    content_text,
    file_time,
    parse_json,
    read_text,
)

_SPOKEN = ("user", "assistant")
_WRAPPED_SKIPS = ("heartbeat", "system_alert", "login")


class LettaImporter:
    name = "letta"
    description = "Letta's Agent File (.af): memory blocks and messages of its agents"

    def sniff(self, head: str) -> int:
        start = head.lstrip()
        if start.startswith('"{') and "agents" in head and "block" in head:
            return 90  # an agent file saved as a JSON string of itself
        if not start.startswith("{"):
            return 0
        agents = '"agents"' in head and '"blocks"' in head
        old = '"core_memory"' in head and '"messages"' in head
        return 90 if agents or old else 0

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        data = parse_json(read_text(path), batch)
        if isinstance(data, str):  # some published agent files are a JSON string of the JSON
            data = parse_json(data, batch)
        if data is NOT_JSON:
            return batch
        if not isinstance(data, dict):
            batch.problems.append(ImportProblem(None, "not an agent file: expected an object"))
            return batch
        blocks = {
            b["id"]: b
            for b in as_list(data.get("blocks"))
            if isinstance(b, dict) and isinstance(b.get("id"), str)
        }
        agents = data["agents"] if isinstance(data.get("agents"), list) else [data]
        for number, agent in enumerate(agents, 1):
            if not isinstance(agent, dict):
                batch.problems.append(ImportProblem(None, f"agent {number}: not an object"))
                continue
            named = [i for i in as_list(agent.get("block_ids")) if isinstance(i, str)]
            own = [blocks[i] for i in named if i in blocks]
            own += [
                b
                for b in as_list(agent.get("core_memory")) + as_list(agent.get("memory_blocks"))
                if isinstance(b, dict)
            ]
            self._agent(path, number, agent, own, batch)
        return batch

    def _agent(
        self,
        path: Path,
        number: int,
        agent: dict[str, Any],
        blocks: list[dict[str, Any]],
        batch: ImportBatch,
    ) -> None:
        name = str(agent.get("name") or agent.get("id") or f"agent-{number}")
        talk = ImportedSession(f"{self.name}/{name}", [], name)
        for index, message in enumerate(as_list(agent.get("messages")), 1):
            turn = self._turn(message, batch)
            if turn is not None:
                talk.turns.append(turn)
                talk.origins.append(f"agent {number} ({name!r}) message {index}")
        if talk.turns:
            batch.sessions.append(talk)
        said = [t.timestamp for t in talk.turns if isinstance(t.timestamp, str)]
        memory = ImportedSession(
            f"{self.name}/{name}/blocks",
            [],
            f"{name}: memory blocks",
            created_at=max(said, default=None) or file_time(path),
        )
        for block in blocks:
            self._block(block, memory, batch)
        if memory.turns:
            batch.sessions.append(memory)

    @staticmethod
    def _block(block: dict[str, Any], memory: ImportedSession, batch: ImportBatch) -> None:
        label, value = block.get("label"), block.get("value")
        if not isinstance(label, str) or not label.strip() or not isinstance(value, str):
            batch.problems.append(
                ImportProblem(None, f"memory block {block.get('id')!r}: needs a label and a value")
            )
            return
        lines = [line.strip() for line in value.splitlines() if line.strip()]
        if not lines:
            batch.skip("empty memory blocks")
            return
        subject = "user" if label == "human" else "self"
        at = len(memory.turns)
        memory.facts += [(at, ImportedFact(subject, label, line)) for line in lines]
        memory.turns.append(NewTurn(role="assistant", text=f"{label}: {value.strip()}"))
        memory.origins.append(f"memory block {label!r}")

    @staticmethod
    def _turn(message: Any, batch: ImportBatch) -> NewTurn | None:
        if not isinstance(message, dict):
            batch.skip("messages that are not objects")
            return None
        role = message.get("role")
        if role not in _SPOKEN:
            batch.skip("system and tool messages")
            return None
        text = content_text(message.get("content"), batch) or message.get("text") or ""
        if role == "assistant" and not str(text).strip():
            text = _sent(message.get("tool_calls"))
        if role == "user":
            wrapped = _wrapped(str(text))
            if wrapped is None:
                batch.skip("heartbeats and system alerts")
                return None
            text = wrapped
        if not isinstance(text, str) or not text.strip():
            batch.skip("messages without text")
            return None
        return NewTurn(
            role=str(role),
            text=text,
            timestamp=message.get("created_at"),
            external_id=str(message["id"]) if message.get("id") else None,
        )


def _sent(calls: Any) -> str:
    """What an assistant said through the `send_message` tool ("" when it said nothing)."""
    for call in as_list(calls):
        function = as_dict(as_dict(call).get("function"))
        if function.get("name") == "send_message":
            try:
                arguments = json.loads(str(function.get("arguments") or "{}"))
            except (ValueError, RecursionError):
                continue
            message = as_dict(arguments).get("message")
            if isinstance(message, str):
                return message
    return ""


def _wrapped(text: str) -> str | None:
    """A MemGPT user message's words: unwrapped from `{"type": "user_message", "message"}`;
    None for a heartbeat or system alert; plain text as it is."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if not isinstance(data, dict):
        return text
    if data.get("type") in _WRAPPED_SKIPS:
        return None
    message = data.get("message")
    return message if data.get("type") == "user_message" and isinstance(message, str) else text
