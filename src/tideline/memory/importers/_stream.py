"""A JSON array read one element at a time, so a large export is never held whole as objects.

`json.loads` of a 50 MB `conversations.json` held the text and every conversation's objects at
once (a peak of 4.6× the file's size above the interpreter's own); an importer keeps only the
turns' words, so reading one conversation at a time is enough. No streaming JSON parser is a
dependency, so this uses the standard library's `raw_decode` on a window of the text that grows
until an element fits (doubling, so a large element costs linear time) and drops what was read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from tideline.memory._results import ImportProblem
from tideline.memory.importers._importer import (
    NOT_JSON,
    ImportBatch,
    ImportedSession,
    open_text,
    parse_json,
)

#: How much text is read at a time (characters; at least).
CHUNK = 1 << 20

_SPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


class _Window:
    """The unread part of a file: `text[pos:]`, with the line `pos` is on."""

    def __init__(self, fh: IO[str], chunk: int):
        self.fh = fh
        self.chunk = chunk
        self.text = ""
        self.pos = 0
        self.line = 1  # of text[0]
        self.eof = False

    def more(self) -> bool:
        """Read on (at least as much again as is unread), dropping what was read; False, with
        nothing changed, at the end of the file."""
        if self.eof:
            return False
        chunk = self.fh.read(max(self.chunk, len(self.text) - self.pos))
        if not chunk:
            self.eof = True
            return False
        self.line += self.text.count("\n", 0, self.pos)
        self.text, self.pos = self.text[self.pos :] + chunk, 0
        return True

    def next_char(self) -> str:
        """The next character that is not white space, left unread ("" at the end)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.text) or not self.more():
                return self.text[self.pos : self.pos + 1]

    def where(self, offset: int) -> int:
        """The line of `text[offset]`."""
        return self.line + self.text.count("\n", 0, offset)


def json_array(
    path: Path, batch: ImportBatch, alone: Callable[[Any], Iterable[Any]], chunk: int = CHUNK
) -> Iterator[Any]:
    """The elements of the JSON array in `path`, one at a time; of a document that is not an
    array, what `alone(document)` makes of it. Where the text stops being JSON becomes a problem naming its line, and
    reading stops there (the elements before it are kept)."""
    with open_text(path) as fh:
        window = _Window(fh, chunk)
        if window.next_char() != "[":
            value = parse_json(window.text + fh.read(), batch)
            if value is not NOT_JSON:
                yield from alone(value)
            return
        window.pos += 1
        if window.next_char() == "]":
            _after_end(window, batch)
            return
        while True:
            value = _element(window, batch)
            if value is NOT_JSON:
                return
            yield value
            char = window.next_char()
            if char == "]":
                _after_end(window, batch)
                return
            if char != ",":
                _broken(window, batch, "expected ',' or ']' after an element")
                return
            window.pos += 1


def _element(window: _Window, batch: ImportBatch) -> Any:
    """The element at `pos`, reading on until it is whole; `NOT_JSON` (with a problem) when the
    text there is not JSON."""
    window.next_char()
    while True:
        try:
            value, end = _DECODER.raw_decode(window.text, window.pos)
        except json.JSONDecodeError as exc:
            if window.more():
                continue
            batch.problems.append(
                ImportProblem(window.where(exc.pos), f"not valid JSON ({exc.msg})")
            )
            return NOT_JSON
        except RecursionError:
            _broken(window, batch, "JSON nested too deeply to read; flatten its arrays and objects")
            return NOT_JSON
        except ValueError:
            _broken(window, batch, "JSON number too long to read; write it as a string")
            return NOT_JSON
        if end == len(window.text) and window.more():
            continue  # a number or word cut at the window's edge: read it whole
        window.pos = end
        return value


def _after_end(window: _Window, batch: ImportBatch) -> None:
    """After the closing `]`: only white space may follow."""
    window.pos += 1
    if window.next_char():
        _broken(window, batch, "extra data after the closing ']'")


def _broken(window: _Window, batch: ImportBatch, why: str) -> None:
    batch.problems.append(ImportProblem(window.where(window.pos), f"not valid JSON ({why})"))


def read_conversations(
    path: Path, export: str, marker: str, conversation: Callable[[int, Any, ImportBatch], None]
) -> ImportBatch:
    """A chat service's `conversations.json` (ChatGPT's, Claude's): a list of conversations, or
    one on its own (an object with its `marker` key), each handed to `conversation(number,
    conv, batch)` with its 1-based number as it is read. The sessions it adds come in
    `batch.later`, one conversation at a time, as they are stored."""
    batch = ImportBatch()

    def alone(document: Any) -> list[Any]:
        if isinstance(document, dict) and marker in document:
            return [document]
        batch.problems.append(
            ImportProblem(None, f"not a {export} export: expected a list of conversations")
        )
        return []

    def sessions() -> Iterator[ImportedSession]:
        found = batch.sessions
        for number, conv in enumerate(json_array(path, batch, alone), 1):
            conversation(number, conv, batch)
            yield from found
            found.clear()

    batch.later = sessions()
    return batch
