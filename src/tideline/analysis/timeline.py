"""Track B of the Layer 0 scanner: raw turns not yet solidified into narratives, in chunks.

Turns newer than a cutoff (normally the latest narrative's timestamp) are sorted by time and cut
into chunks wherever two consecutive turns are more than `max_gap` apart: one sitting, one chunk.
The markdown rendering is what the solidification prompt reads; it names every turn id so the LLM
can fill `source_links`. The JSON rendering is for `--json` and the MCP tool.

Timestamps are `datetime`s, all timezone-aware or all naive (Python refuses to compare the two).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

__all__ = [
    "DEFAULT_MAX_GAP",
    "Chunk",
    "Turn",
    "chunk_turns",
    "chunks_to_json",
    "chunks_to_markdown",
]

DEFAULT_MAX_GAP = timedelta(minutes=30)


@dataclass(frozen=True, slots=True)
class Turn:
    """One raw-context turn; `speaker` is optional (role or name)."""

    id: Hashable
    timestamp: datetime
    text: str
    speaker: str = ""


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive turns with no gap longer than the chunking `max_gap`."""

    index: int
    turns: tuple[Turn, ...]

    @property
    def start(self) -> datetime:
        return self.turns[0].timestamp

    @property
    def end(self) -> datetime:
        return self.turns[-1].timestamp


def chunk_turns(
    turns: Iterable[Turn],
    *,
    after: datetime | None = None,
    max_gap: timedelta = DEFAULT_MAX_GAP,
) -> list[Chunk]:
    """Chunks of the turns strictly newer than `after` (all turns when None)."""
    if max_gap < timedelta(0):
        raise ValueError(f"max_gap={max_gap}: the gap between chunks cannot be negative")
    # A stable sort: turns with the same timestamp keep the order they were given in.
    fresh = sorted(
        (t for t in turns if after is None or t.timestamp > after),
        key=lambda t: t.timestamp,
    )
    chunks: list[Chunk] = []
    current: list[Turn] = []
    for turn in fresh:
        if current and turn.timestamp - current[-1].timestamp > max_gap:
            chunks.append(Chunk(len(chunks), tuple(current)))
            current = []
        current.append(turn)
    if current:
        chunks.append(Chunk(len(chunks), tuple(current)))
    return chunks


def _one_line(text: str, max_chars: int | None) -> str:
    flat = " ".join(text.split())
    if max_chars is not None and len(flat) > max_chars:
        flat = flat[: max(0, max_chars - 1)].rstrip() + "…"
    return flat


def _duration(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def chunks_to_markdown(
    chunks: list[Chunk],
    *,
    max_chars: int | None = None,
    title: str = "Unindexed context",
    unlinked: Sequence[Hashable] = (),
) -> str:
    """Markdown for the solidification prompt: a heading per chunk, one bullet per turn.

    `unlinked` (Track A: narratives whose `source_links` are empty) adds a short section first.
    """
    total = sum(len(c.turns) for c in chunks)
    lines = [f"# {title}", "", f"{len(chunks)} chunks, {total} turns not yet in any narrative.", ""]
    if unlinked:
        ids = ", ".join(f"`{nid}`" for nid in unlinked)
        lines += [f"## Narratives without source links ({len(unlinked)})", "", ids, ""]
    for c in chunks:
        lines.append(
            f"## Chunk {c.index + 1}: {c.start.isoformat(' ', 'minutes')} → "
            f"{c.end.isoformat(' ', 'minutes')} ({len(c.turns)} turns, "
            f"{_duration(c.end - c.start)})"
        )
        lines.append("")
        for t in c.turns:
            who = f" **{_one_line(t.speaker, 40)}**:" if t.speaker else ""
            stamp = t.timestamp.strftime("%H:%M")
            lines.append(f"- `{t.id}` {stamp}{who} {_one_line(t.text, max_chars)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _jsonable_id(value: Hashable) -> int | str:
    return value if isinstance(value, (int, str)) else str(value)


def chunks_to_json(chunks: list[Chunk]) -> list[dict[str, Any]]:
    """A JSON-able list of chunks with ISO timestamps and the turn ids (for `source_links`)."""
    return [
        {
            "index": c.index,
            "start": c.start.isoformat(),
            "end": c.end.isoformat(),
            "turn_ids": [_jsonable_id(t.id) for t in c.turns],
            "turns": [
                {
                    "id": _jsonable_id(t.id),
                    "timestamp": t.timestamp.isoformat(),
                    "speaker": t.speaker,
                    "text": t.text,
                }
                for t in c.turns
            ],
        }
        for c in chunks
    ]
