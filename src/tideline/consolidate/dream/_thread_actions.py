"""`thread_action`: the one reading of a `memory_threads` call (or `tideline threads`) — list,
open, touch or close — so both drivers only map their arguments onto it.

Each action checks the arguments it needs and names the missing one with the fix; an argument
that belongs to another action is refused rather than silently ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tideline.errors import InvalidInput

if TYPE_CHECKING:
    from tideline.consolidate.dream._dream import Dream

ACTIONS = ("list", "open", "touch", "close")
ALL = "all"
#: Which optional arguments each action reads (the others must be left out).
_USES = {
    "list": {"status", "limit"},
    "open": {"title", "why", "memories"},
    "touch": {"thread_id", "note", "memories"},
    "close": {"thread_id", "status", "why"},
}


def thread_action(
    dream: Dream,
    action: str = "list",
    *,
    status: str | None = None,
    thread_id: int | None = None,
    title: str | None = None,
    why: str | None = None,
    note: str | None = None,
    memories: Sequence[int] = (),
    limit: int = 50,
) -> dict[str, Any]:
    """`{"threads": [...]}` for list, `{"thread": {...}}` for the others."""
    if action not in ACTIONS:
        raise InvalidInput(f"thread action {action!r} is unknown; use one of {list(ACTIONS)}")
    given = {
        "status": status,
        "thread_id": thread_id,
        "title": title,
        "why": why,
        "note": note,
        "memories": list(memories) or None,
    }
    stray = sorted(k for k, v in given.items() if v is not None and k not in _USES[action])
    if stray:
        raise InvalidInput(
            f"threads {action} takes no {', '.join(stray)}; "
            f"it reads {', '.join(sorted(_USES[action] - {'limit'}))}"
        )
    if action == "list":
        wanted = status or "open"
        found = dream.threads(None if wanted == ALL else wanted, limit)
        return {"threads": [t.to_dict() for t in found]}
    if action == "open":
        if not (title or "").strip():
            raise InvalidInput("threads open needs a title: the direction or question, in a line")
        return {"thread": dream.open_thread(title or "", why or "", list(memories)).to_dict()}
    if thread_id is None:
        raise InvalidInput(f"threads {action} needs the thread's id; list the threads to find it")
    if action == "touch":
        if not (note or "").strip() and not memories:
            raise InvalidInput("threads touch needs a note or memories: what moved the thread")
        return {"thread": dream.touch_thread(thread_id, note or "", list(memories)).to_dict()}
    return {"thread": dream.close_thread(thread_id, status or "resolved", why or "").to_dict()}
