"""The heading chunker (`headings-v1`): a note is cut where a reader would cut it.

- Boundaries are `#`, `##` and `###` headings as markdown-it-py parses them, so a `## ` line
  inside a code fence is text, never a boundary. Deeper headings stay inside their section.
- A section longer than `max_tokens` is cut at block boundaries (paragraphs, lists, fences);
  a single block that is still too long is cut at sentences, and a fence at lines. Each new piece
  repeats about `overlap` (15%) of the previous one so no idea is lost at a seam.
- Optional YAML front matter (`id`, `tags`, `updated`) is parsed into typed values; a front matter
  without `updated` yields a warning. Line numbers always refer to the file on disk (1-based).

Token counts come from a callable (the embedder's tokenizer when there is one), so chunk sizes
match what the model really sees; the default is a byte-based estimate.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml
from markdown_it import MarkdownIt

from tideline.embed import estimate_tokens
from tideline.library._meta import CHUNKER_VERSION, load_yaml, scalar_text

__all__ = [
    "CHUNKER_VERSION",
    "Chunk",
    "ChunkedNote",
    "chunk_markdown",
    "embed_text",
]

BOUNDARY_TAGS = {"h1": 1, "h2": 2, "h3": 3}
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*\r?$\n?", re.S | re.M)
_md = MarkdownIt("commonmark")


@dataclass(frozen=True)
class Chunk:
    """One searchable piece of a note."""

    path: str
    heading_path: tuple[str, ...]
    line: int  # 1-based line in the file where the piece starts
    ord: int
    text: str

    @property
    def heading(self) -> str:
        return " › ".join(self.heading_path)

    def embed_text(self) -> str:
        return embed_text(self.heading, self.text)


def embed_text(heading: str, text: str) -> str:
    """What the embedder sees: the heading path gives a bare paragraph its topic. A piece that
    starts with its own heading gets only the parents, so the title is not said twice."""
    if not heading:
        return text
    if not text.lstrip().startswith("#"):
        return f"{heading}\n\n{text}"
    if " › " in heading:
        return f"{heading.rsplit(' › ', 1)[0]}\n\n{text}"
    return text


@dataclass
class ChunkedNote:
    path: str
    chunks: list[Chunk]
    note_id: str = ""
    tags: tuple[str, ...] = ()
    updated: str = ""
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Unit:
    line: int  # 0-based line in the body
    text: str
    tokens: int


def _split_front_matter(text: str, path: str, note: ChunkedNote) -> tuple[str, int]:
    m = _FRONT_MATTER.match(text)
    if not m:
        return text, 0
    offset = text.count("\n", 0, m.end())
    try:
        data = load_yaml(m.group(1))
    except yaml.YAMLError:
        note.warnings.append(f"{path}: front matter is not valid YAML; indexed as text")
        return text, 0
    if not isinstance(data, dict):
        note.warnings.append(f"{path}: front matter is not a mapping; ignored")
        return text[m.end() :], offset
    note.note_id = scalar_text(data.get("id")).strip()
    tags = data.get("tags") or []
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",")]
    if isinstance(tags, list):
        note.tags = tuple(scalar_text(t).strip() for t in tags if scalar_text(t).strip())
    note.updated = scalar_text(data.get("updated")).strip()
    if not note.updated:
        note.warnings.append(f"{path}: front matter has no 'updated' date; add updated: YYYY-MM-DD")
    return text[m.end() :], offset


def chunk_markdown(
    text: str,
    path: str,
    *,
    count_tokens: Callable[[str], int] = estimate_tokens,
    max_tokens: int = 800,
    overlap: float = 0.15,
) -> ChunkedNote:
    """Cut one note into chunks; see the module docstring for the rules."""
    note = ChunkedNote(path, [])
    body, offset = _split_front_matter(text, path, note)
    lines = body.splitlines(keepends=True)
    tokens = _md.parse(body)

    # Section starts: (line, level, title)
    starts: list[tuple[int, int, str]] = []
    blocks: list[tuple[int, str]] = []  # top-level block start lines and token types
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None or tok.nesting == -1:
            continue
        blocks.append((tok.map[0], tok.type))
        if tok.type == "heading_open" and tok.tag in BOUNDARY_TAGS:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            starts.append((tok.map[0], BOUNDARY_TAGS[tok.tag], title))

    sections: list[tuple[int, int, tuple[str, ...]]] = []
    stack: list[tuple[int, str]] = []
    first = starts[0][0] if starts else len(lines)
    if any(line.strip() for line in lines[:first]):
        sections.append((0, first, ()))
    for n, (line, level, title) in enumerate(starts):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        sections.append((line, end, tuple(t for _, t in stack)))

    ordinal = 0
    budget = max(1, int(max_tokens * overlap))
    for start, end, heading_path in sections:
        section_text = "".join(lines[start:end]).strip("\n")
        if not section_text.strip():
            continue
        if count_tokens(section_text) <= max_tokens:
            pieces = [(start, section_text)]
        else:
            units = _units(lines, start, end, blocks, count_tokens, max_tokens)
            pieces = _pack(units, max_tokens, budget)
        for line, piece in pieces:
            note.chunks.append(Chunk(path, heading_path, line + offset + 1, ordinal, piece))
            ordinal += 1
    return note


def _units(
    lines: list[str],
    start: int,
    end: int,
    blocks: list[tuple[int, str]],
    count: Callable[[str], int],
    max_tokens: int,
) -> list[_Unit]:
    """Blocks of one section, with blocks that are too long cut into sentences or lines."""
    cuts = sorted({b for b, _ in blocks if start <= b < end} | {start})
    kinds = dict(blocks)
    units: list[_Unit] = []
    for n, b in enumerate(cuts):
        e = cuts[n + 1] if n + 1 < len(cuts) else end
        text = "".join(lines[b:e]).strip("\n")
        if not text.strip():
            continue
        t = count(text)
        if t <= max_tokens:
            units.append(_Unit(b, text, t))
        elif kinds.get(b) in ("fence", "code_block", "html_block"):
            units.extend(_line_units(lines, b, e, count))
        else:
            units.extend(_sentence_units(text, b, count, lines, e))
    return units


def _line_units(lines: list[str], b: int, e: int, count: Callable[[str], int]) -> list[_Unit]:
    return [
        _Unit(i, lines[i].rstrip("\n"), count(lines[i])) for i in range(b, e) if lines[i].strip()
    ]


def _sentence_units(
    text: str, b: int, count: Callable[[str], int], lines: list[str], e: int
) -> list[_Unit]:
    out: list[_Unit] = []
    pos = 0
    for part in _SENTENCE_END.split(text):
        idx = text.find(part, pos)
        line = b + text.count("\n", 0, max(idx, 0))
        pos = max(idx, 0) + len(part)
        if part.strip():
            out.append(_Unit(line, part, count(part)))
    if len(out) <= 1:  # one giant sentence: fall back to lines
        return _line_units(lines, b, e, count)
    return out


def _pack(units: list[_Unit], max_tokens: int, overlap_budget: int) -> list[tuple[int, str]]:
    pieces: list[tuple[int, str]] = []
    current: list[_Unit] = []
    size = 0
    fresh = 0  # units in `current` that are not overlap
    for u in units:
        if current and size + u.tokens > max_tokens and fresh:
            pieces.append(_join(current))
            carry: list[_Unit] = []
            carried = 0
            for prev in reversed(current):
                if carried + prev.tokens > overlap_budget:
                    break
                carry.insert(0, prev)
                carried += prev.tokens
            current, size, fresh = carry, carried, 0
        current.append(u)
        size += u.tokens
        fresh += 1
    if current and fresh:
        pieces.append(_join(current))
    return pieces


def _join(units: list[_Unit]) -> tuple[int, str]:
    text = ""
    last = units[0].line
    for u in units:
        if text:
            text += "\n\n" if u.line != last else " "
        text += u.text
        last = u.line
    return units[0].line, text
