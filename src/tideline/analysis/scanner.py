"""Layer 0 scanner: the raw context that is not yet memory, for the DREAM solidify prompt.

Two tracks, no LLM:
- Track A: narratives with no source links (possibly solidified from context that was never kept,
  or written before links existed; `backfill_source_links` can propose links for them).
- Track B: in each session, the turns after the last one a narrative links to (all of a session
  no narrative links to), cut into chunks wherever two consecutive turns are more than `max_gap`
  apart. "After" is the conversation's own order, never the time a memory was written: an
  imported year of chats stays unindexed until memories link to it, whenever those memories
  were written (comparing the turns' time with the memories' write time called 437 imported
  turns indexed as soon as any memory was newer). With `after`, every turn said after that time
  that no narrative links to (the dream's day window).

`Scan.to_markdown()` is what the solidify prompt reads (every turn id is named so the model can fill
`source_links`); `Scan.to_dict()` is for `--json` and MCP. Read only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from tideline.analysis.timeline import Chunk, Turn, chunk_turns, chunks_to_json, chunks_to_markdown
from tideline.clock import from_text, parse_time
from tideline.errors import InvalidInput
from tideline.memory import Memory

__all__ = ["Scan", "scan_unindexed"]


@dataclass
class Scan:
    """The result of one scan: the cutoff used, Track A narratives and Track B chunks."""

    cutoff: str | None
    max_gap_minutes: float
    unlinked: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    sessions: dict[int, str] = field(default_factory=dict)  # turn id -> session key

    @property
    def turns(self) -> int:
        return sum(len(c.turns) for c in self.chunks)

    def summary(self) -> dict[str, Any]:
        return {
            "cutoff": self.cutoff,
            "unlinked_narratives": len(self.unlinked),
            "unindexed_turns": self.turns,
            "chunks": len(self.chunks),
        }

    def to_markdown(self, max_chars: int | None = 500) -> str:
        since = f" since {self.cutoff}" if self.cutoff else ""
        text = chunks_to_markdown(
            self.chunks, max_chars=max_chars, title=f"Unindexed context{since}"
        )
        if not self.unlinked:
            return text
        listing = "\n".join(
            f"- `{n['id']}` {n['created_at'][:10]} {' '.join(n['gesture'].split())}"
            for n in self.unlinked
        )
        section = f"## Narratives without source links ({len(self.unlinked)})\n\n{listing}\n"
        if "\n## Chunk" in text:
            head, tail = text.split("\n## Chunk", 1)
            return f"{head}\n{section}\n## Chunk{tail}"
        return f"{text}\n{section}"

    def to_dict(self) -> dict[str, Any]:
        chunks = chunks_to_json(self.chunks)
        for c in chunks:
            c["sessions"] = sorted({self.sessions.get(t, "") for t in c["turn_ids"]})
        return {
            **self.summary(),
            "max_gap_minutes": self.max_gap_minutes,
            "unlinked": self.unlinked,
            "chunk_list": chunks,
        }


def scan_unindexed(
    memory: Memory,
    *,
    max_gap: timedelta = timedelta(minutes=30),
    after: str | None = None,
) -> Scan:
    """Scan both tracks; `after` (a time) replaces each session's last linked turn as the start."""
    if max_gap < timedelta(0):
        raise InvalidInput(f"max_gap={max_gap}: the gap between chunks cannot be negative")
    cutoff = parse_time(after, "after")
    with memory.lock:  # one connection, and drivers call this from worker threads
        unlinked = [
            {"id": n["id"], "gesture": n["gesture"], "created_at": n["created_at"]}
            for n in memory.narratives.unlinked()
        ]
        turns = memory.raw.turns_after(cutoff)  # all of them without a cutoff
        linked = memory.narratives.linked_turn_ids([t.id for t in turns])
    by_session: dict[str, list[Turn]] = defaultdict(list)
    sessions: dict[int, str] = {}
    for t in turns:  # in time order, so a session's list is in its own order
        if t.id in linked:
            if cutoff is None:  # what came before in this session is memory's now
                by_session[t.session].clear()
            continue
        by_session[t.session].append(Turn(t.id, from_text(t.ts), t.text, t.speaker or t.role))
        sessions[t.id] = t.session
    chunks = [c for turns in by_session.values() for c in chunk_turns(turns, max_gap=max_gap)]
    chunks.sort(key=lambda c: (c.start, str(c.turns[0].id)))
    kept = {t.id for c in chunks for t in c.turns}
    return Scan(
        cutoff=cutoff,
        max_gap_minutes=max_gap.total_seconds() / 60,
        unlinked=unlinked,
        chunks=[Chunk(i, c.turns) for i, c in enumerate(chunks)],
        sessions={tid: key for tid, key in sessions.items() if tid in kept},
    )
