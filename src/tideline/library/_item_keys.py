"""Item keys: the finer search keys of a chunk that is mostly a list.

A page of examples (tldr, a runbook, a checklist) is one chunk, and one example's wording
competes with the whole page's meaning: a query that names one item finds the page late. So a
chunk with at least `MIN_ITEMS` top-level list items gets extra search keys under it:

- one key per top-level list item, with the code block (a fence, an indented block or a paragraph
  that is one code span) that follows it before the next item;
- a head key: the rest of the chunk (its title, intro and summary) without those items.

Keys are records of their own (lexical and vector); a hit on a key counts for its chunk
(`_aggregate`). Head and items together cover every line of the chunk once, so the chunk itself
needs no vector of its own and embedding costs about what the chunk did, plus the heading repeated
per key.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

MIN_ITEMS = 2
MAX_ITEMS = 64  # items past this stay in the head key
_md = MarkdownIt("commonmark")
_CODE_BLOCKS = ("fence", "code_block")


@dataclass(frozen=True)
class Key:
    """One key of a chunk: `line` is 0-based inside the chunk text; `kind` "head" or "item"."""

    line: int
    text: str
    kind: str


def _is_code_paragraph(tokens: list[Token], i: int) -> bool:
    """A paragraph that is one inline code span (`tar cf …`): the command of the item above."""
    inline = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
    return len(inline) > 1 and inline[0] == "`" and inline[-1] == "`" and "\n" not in inline


def chunk_keys(text: str) -> list[Key]:
    """The item keys and the head key of one chunk, or [] when it has fewer than `MIN_ITEMS`
    top-level list items (the chunk is its own key then)."""
    tokens = _md.parse(text)
    spans: list[list[int]] = []  # [start, end) lines of each item (with its code block)
    after_list = False
    for i, tok in enumerate(tokens):
        if tok.map is None or tok.nesting == -1:
            continue
        if tok.level == 1 and tok.type == "list_item_open":
            spans.append(list(tok.map))
            continue
        if tok.level != 0:
            continue
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            after_list = True
            continue
        code = tok.type in _CODE_BLOCKS or (
            tok.type == "paragraph_open" and _is_code_paragraph(tokens, i)
        )
        if code and after_list and spans:
            spans[-1][1] = max(spans[-1][1], tok.map[1])
        after_list = code and after_list  # two code blocks in a row still belong to the item
    if len(spans) < MIN_ITEMS:
        return []
    lines = text.splitlines()
    covered = [False] * len(lines)
    keys: list[Key] = []
    for start, end in spans[:MAX_ITEMS]:
        body = "\n".join(lines[start:end]).strip()
        for n in range(start, min(end, len(lines))):
            covered[n] = True
        if body:
            keys.append(Key(start, body, "item"))
    rest = [(n, line) for n, line in enumerate(lines) if not covered[n]]
    head = "\n".join(line for _, line in rest).strip()
    if head:
        first = next(n for n, line in rest if line.strip())
        keys.insert(0, Key(first, _squeeze(head), "head"))
    return keys


def _squeeze(text: str) -> str:
    """Blank runs left where the items were become one blank line."""
    out: list[str] = []
    for line in text.splitlines():
        if line.strip() or (out and out[-1].strip()):
            out.append(line)
    return "\n".join(out).strip()
