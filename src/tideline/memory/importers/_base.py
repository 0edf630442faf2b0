"""The importer interface: read a file, hand back sessions of turns plus what went wrong.

Importers never write: `Memory.import_file` stores what they return in one transaction, so a
file is imported whole or not at all, and re-importing it adds nothing (turns are deduplicated by
hash). Broken lines are reported with their line numbers and the rest is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tideline.memory._raw import NewTurn
from tideline.memory._types import ImportProblem


@dataclass
class ImportedSession:
    key: str
    turns: list[NewTurn]
    title: str | None = None


@dataclass
class ImportBatch:
    sessions: list[ImportedSession] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    skipped: int = 0


class Importer(Protocol):
    """`name` is what `--format` takes; `read` parses one file."""

    name: str
    description: str

    def read(self, path: Path) -> ImportBatch: ...


def json_lines(path: Path, batch: ImportBatch) -> Iterator[tuple[int, Any]]:
    """Parsed JSON lines with their 1-based numbers; broken lines become problems."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                batch.problems.append(
                    ImportProblem(number, f"not valid JSON ({exc.msg} at column {exc.colno})")
                )


def content_text(content: Any) -> str:
    """Message content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type") in (
                "text",
                "input_text",
                "output_text",
            ):
                texts.append(str(part.get("text", "")))
        return "\n".join(t for t in texts if t)
    return ""
