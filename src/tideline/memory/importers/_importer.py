"""The importer interface: read a file, hand back sessions of turns plus what went wrong.

Importers never write: `Memory.import_file` stores what they return in one transaction, and
re-importing a file adds nothing (turns are deduplicated by hash). A broken record is reported
with where it is — its line number, or a place such as "conversation 3 ('Trip') message 7" in
`ImportedSession.origins` — and why, and the rest is imported. What an importer leaves out on
purpose (system messages, images, tool calls) is counted by kind with `ImportBatch.skip`.

`sniff(head)` (optional) scores how surely the first `SNIFF_CHARS` of a file are this format,
0–100, for `--format auto`.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from tideline.clock import to_text
from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportedFact, ImportProblem

#: Where a turn came from: a 1-based line number, or a place in a JSON document.
Origin = int | str

#: How much of a file `--format auto` reads to recognise it.
SNIFF_CHARS = 65_536


@dataclass
class ImportedSession:
    """One conversation. `origins[i]` says where turn i came from (for its error message);
    `source`, `created_at`, `forgotten` come from a Tideline export (the original importer, the
    session's date, a tombstone); `created_at` also dates the turns that have no time of their
    own (`dated_by_neighbours`)."""

    key: str
    turns: list[NewTurn]
    title: str | None = None
    origins: list[Origin] = field(default_factory=list)
    source: str | None = None
    created_at: str | None = None
    forgotten: tuple[str, str | None] | None = None
    #: (index of the turn that backs it, the fact): what a peer's memory held as facts.
    facts: list[tuple[int, ImportedFact]] = field(default_factory=list)


@dataclass
class ImportBatch:
    """What an importer read. `narratives` and `profile` are records of a Tideline export,
    restored as stored (`restore_narratives`; the profile's `restore`)."""

    sessions: list[ImportedSession] = field(default_factory=list)
    #: Sessions read one by one as they are stored, after `sessions` (a large export is never
    #: held whole); the counts and problems below are complete once it is used up.
    later: Iterable[ImportedSession] = ()
    problems: list[ImportProblem] = field(default_factory=list)
    skipped: int = 0
    skipped_kinds: Counter[str] = field(default_factory=Counter)
    narratives: list[dict[str, Any]] = field(default_factory=list)
    profile: list[dict[str, Any]] = field(default_factory=list)

    def skip(self, kind: str, count: int = 1) -> None:
        """Leave out `count` records of this kind on purpose, counted."""
        self.skipped += count
        self.skipped_kinds[kind] += count


class Importer(Protocol):
    """`name` is what `--format` takes; `read` parses one file."""

    name: str
    description: str

    def read(self, path: Path) -> ImportBatch: ...


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (exports leave fields out or null)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def first_json_line(head: str) -> Any:
    """The first non-blank line of `head` as JSON, or None (for sniffing JSONL)."""
    for line in head.splitlines():
        if line.strip():
            try:
                return json.loads(line)
            except (ValueError, RecursionError):
                return None
    return None


#: What `parse_json` returns for a document it could not read (`None` is valid JSON).
NOT_JSON = object()


def open_text(path: Path) -> TextIO:
    """The file opened as text, as every importer reads it: UTF-8 with or without a byte-order
    mark (editors on Windows write one, and JSON refuses it), undecodable bytes as U+FFFD."""
    return path.open(encoding="utf-8-sig", errors="replace")


def file_time(path: Path) -> str:
    """When the file was last written, in the stored form: the time of a peer's memory file
    whose records carry none (they were all held by then)."""
    return to_text(dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC))


def read_text(path: Path) -> str:
    """The whole file as text (`open_text`)."""
    with open_text(path) as fh:
        return fh.read()


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


def place(number: int, title: str | None) -> str:
    """Where a conversation is, for what its messages' problems say: "conversation 3 ('Trip')"."""
    return f"conversation {number}" + (f" ({title[:60]!r})" if title else "")


def json_lines(path: Path, batch: ImportBatch) -> Iterator[tuple[int, Any]]:
    """Parsed JSON lines with their 1-based numbers; broken lines become problems."""
    with open_text(path) as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            value = parse_json(line, batch, number)
            if value is not NOT_JSON:
                yield number, value


_TEXT_PARTS = ("text", "input_text", "output_text")


def content_text(content: Any, batch: ImportBatch | None = None) -> str:
    """Message content as text: a string, or the text parts of a list of parts; with `batch`,
    the other parts (images, tool calls, …) are counted as skipped."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type") in _TEXT_PARTS:
                texts.append(str(part.get("text", "")))
            elif batch is not None:
                batch.skip("non-text parts")
        return "\n".join(t for t in texts if t)
    return ""
