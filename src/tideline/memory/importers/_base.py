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


#: What `parse_json` returns for a document it could not read (`None` is valid JSON).
NOT_JSON = object()


def read_text(path: Path) -> str:
    """The file as text; undecodable bytes become U+FFFD, as in every importer."""
    return path.read_text(encoding="utf-8", errors="replace")


def parse_json(text: str, batch: ImportBatch, line: int | None = None) -> Any:
    """One JSON document, or `NOT_JSON` with a problem recorded when it cannot be read.

    Valid JSON that Python cannot hold — nesting deeper than the recursion limit (`[[[[…`), an
    integer of more than 4,300 digits — is reported like a syntax error, never raised.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f" at column {exc.colno}" if line is not None else ""
        problem = ImportProblem(line or exc.lineno, f"not valid JSON ({exc.msg}{where})")
    except RecursionError:
        problem = ImportProblem(
            line, "JSON nested too deeply to read; flatten its arrays and objects"
        )
    except ValueError:
        problem = ImportProblem(line, "JSON number too long to read; write it as a string")
    batch.problems.append(problem)
    return NOT_JSON


def json_lines(path: Path, batch: ImportBatch) -> Iterator[tuple[int, Any]]:
    """Parsed JSON lines with their 1-based numbers; broken lines become problems."""
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            value = parse_json(line, batch, number)
            if value is not NOT_JSON:
                yield number, value


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
