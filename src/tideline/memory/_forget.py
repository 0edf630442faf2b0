"""Forgetting: what a request names (turns, a session, narratives, a query), then erasing it.

Two steps so a person sees what goes before it goes: `plan` lists the live records a request
names, `carry_out` erases them in one transaction (and `Memory.forget` then drops their vectors from the
shared embedding cache). Erasing leaves tombstones (see `_raw` and
`_narratives`): the words, the speaker, the tags and every search row and vector are gone; the id,
the time and the reason stay, so a narrative's source links, a trace window and a profile fact's
evidence read "[forgotten]" instead of pointing at nothing. A query names every live turn and
narrative whose text contains each of its words (3+ characters) verbatim, never a mere neighbour
in meaning: forgetting must not guess.
"""

from __future__ import annotations

from collections.abc import Sequence

from tideline.errors import InvalidInput, NotFound
from tideline.memory._narratives import Narratives
from tideline.memory._raw import RawContext
from tideline.memory._results import Forgetting
from tideline.search import parse_query, valid_text

DEFAULT_WHY = "asked to forget"
MAX_WHY = 500


def plan(
    raw: RawContext,
    narratives: Narratives,
    *,
    turns: Sequence[int] = (),
    session: str | None = None,
    narrative_ids: Sequence[int] = (),
    query: str | None = None,
    why: str | None = None,
) -> Forgetting:
    """The live records these targets name (nothing is changed)."""
    reason = _why(why)
    if not (turns or session or narrative_ids or (query and query.strip())):
        raise InvalidInput(
            "nothing named to forget; pass turn ids, a session, narrative ids or a query"
        )
    turn_ids = raw.require(turns) if turns else []
    note_ids = list(dict.fromkeys(int(i) for i in narrative_ids))
    for nid in note_ids:
        narratives.require(nid)
    sessions = []
    if session is not None:
        session = valid_text(session)  # a lone surrogate cannot be bound to SQL
        found = raw.live_session(session)
        if found is None:
            raise NotFound(
                f"session {session[:80]!r} does not exist (or is forgotten already); "
                "list sessions with `tideline sessions`"
            )
        sessions.append({**found, "turns": len(raw.live_turn_ids(int(found["id"])))})
    if query is not None and query.strip():
        parsed = parse_query(query)
        if not parsed.trigram_all:
            raise InvalidInput(
                f"query {query[:80]!r} has no word of 3 or more characters to match exactly; "
                "name what to forget by such a word or by id"
            )
        turn_ids += raw.index.containing(parsed)
        note_ids += narratives.index.containing(parsed)
    live_turns = [t for t in raw.get(list(dict.fromkeys(turn_ids))) if not t.forgotten_at]
    live_notes = [n for n in narratives.get(list(dict.fromkeys(note_ids))) if not n.forgotten_at]
    return Forgetting(live_turns, live_notes, sessions, reason)


def carry_out(raw: RawContext, narratives: Narratives, planned: Forgetting) -> list[str]:
    """Erase what `planned` lists, in one transaction, and mark it done. Returns the texts the
    embedder saw of what was erased, for the caller to drop from the embedding cache."""
    turn_ids = [t.id for t in planned.turns]
    for s in planned.sessions:
        turn_ids += raw.live_turn_ids(int(s["id"]))
    note_ids = [n.id for n in planned.narratives]
    texts = list(raw.texts(turn_ids).values()) + [t for _, t in narratives.text_rows(note_ids)]
    with raw.db.transaction():
        for s in planned.sessions:
            raw.forget_session(int(s["id"]), planned.why)
        raw.forget_turns(turn_ids, planned.why)
        narratives.forget(note_ids, planned.why)
    planned.done = True
    return texts


def _why(why: str | None) -> str:
    if why is None or not str(why).strip():
        return DEFAULT_WHY
    if not isinstance(why, str):
        raise InvalidInput(f"why must be text, got {type(why).__name__}")
    if len(why) > MAX_WHY:
        raise InvalidInput(f"why is {len(why):,} characters; the limit is {MAX_WHY} — shorten it")
    return valid_text(why).strip()
