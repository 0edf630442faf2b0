"""Fencing: memory text is data, never instructions.

Every tier's items sit between a `<memory-data tier="…">` line and a `</memory-data>` line. Inside,
each item starts with its marker (`[n:12 2026-05-01 w=0.74]`: kind and id, date, weight) and its
continuation lines are indented, so no line of remembered text can ever equal a fence line.
Before that, `neutralise` defangs what could still pass for structure to a model:

- fence tags (`<memory-data`, `</tideline-memory`, …) anywhere: `<` becomes `‹`;
- chat-template and role tags (`<|im_start|>`, `<system>`, `[INST]`, `<<SYS>>`, `</s>`):
  their brackets become `‹ ›` / `( )`;
- lines that pose as a message header (`System:`, `assistant message:`, `# System prompt`):
  prefixed with `(quoted) `;
- control characters, zero-width characters and Unicode line separators: removed or turned
  into plain newlines, so a fence cannot hide behind an invisible character.
"""

from __future__ import annotations

import re

FENCE_TAG = "memory-data"
BLOCK_TAG = "tideline-memory"
FENCE_CLOSE = f"</{FENCE_TAG}>"
INDENT = "  "
QUOTED = "(quoted) "

_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NEWLINES = re.compile("\r\n|[\r\x85\u2028\u2029]")
_FENCE = re.compile(rf"<(\s*/?\s*(?:{FENCE_TAG}|{BLOCK_TAG})\b)", re.IGNORECASE)
_SPECIAL = re.compile(r"<\|([^|<>\n]{0,40})\|>")
_ROLE_TAG = re.compile(
    r"<(\s*/?\s*(?:system|assistant|user|developer|human|tool|instructions?|im_start|im_end|s)\b"
    r"[^<>\n]{0,80})>",
    re.IGNORECASE,
)
_INST = re.compile(r"\[(\s*/?\s*INST\s*)\]", re.IGNORECASE)
_SYS = re.compile(r"<<(\s*/?\s*SYS\s*)>>", re.IGNORECASE)
_ROLE_LINE = re.compile(
    r"^(\s*(?:#+\s*)?)((?:system|assistant|developer|human|user|ai)\b"
    r"(?:\s*(?:prompt|message|instructions?|note|override))?\s*[:：]"
    r"|(?:system|developer)\s+(?:prompt|message|instructions?)\b)",
    re.IGNORECASE | re.MULTILINE,
)


def neutralise(text: str) -> tuple[str, int]:
    """`text` with everything that could close a fence or pose as a message defanged.

    Returns the clean text and how many things were changed (0 for ordinary prose).
    """
    text = _NEWLINES.sub("\n", text or "")
    text = _CONTROL.sub("", text.replace("\t", "    "))
    text, invisible = _INVISIBLE.subn("", text)
    changes = 0
    for pattern, repl in (
        (_FENCE, r"‹\1"),
        (_SPECIAL, r"‹|\1|›"),
        (_SYS, r"‹‹\1››"),
        (_ROLE_TAG, r"‹\1›"),
        (_INST, r"(\1)"),
        (_ROLE_LINE, rf"\1{QUOTED}\2"),
    ):
        text, n = pattern.subn(repl, text)
        changes += n
    return text, changes + (1 if invisible else 0)


def one_line(text: str) -> str:
    """Markers and headers are one line: collapse whitespace."""
    return " ".join(text.split())


def fence_open(tier: str) -> str:
    return f'<{FENCE_TAG} tier="{tier}">'


def render_item(marker: str, text: str) -> str:
    """`[marker] first line` and the rest indented; `text` must already be neutralised."""
    lines = text.strip("\n").split("\n") or [""]
    first = f"[{marker}] {lines[0].strip()}".rstrip()
    rest = [f"{INDENT}{line.rstrip()}" if line.strip() else "" for line in lines[1:]]
    while rest and not rest[-1]:
        rest.pop()
    return "\n".join([first, *rest])
