"""The tiers T0–T4, each a function from the memory to a `Tier`: a section (or None) plus notes.

- T0 identity anchor: SOUL.md, the profile's latest snapshot, the self-concept (the latest
  narratives of kind "reflection", each with the memories it rests on).
- T1 session bridge: the last turns of the current (or last) session, and the memories the
  message's search finds (`Memory.search`: the one retrieval path, cut by the relevance floor).
- T1s session memory (with a session key): the session's sliding summary, its turns recalled by
  similarity to the message, and its recent turns T1 did not show (`SessionMemory`).
- T1p, T1q: the profile's facts this message touches, and an open question (`_understanding`).
- T2 prefetch cache: the top of the high-weight pool (`tideline.analysis.prefetch`; dreams and
  reflections excluded — reflections are T0's).
- T2b context bridge: of the most recent day's sessions, the one whose linked memory weighs
  most, as raw turns — the linked turns and their neighbours first when the budget is short.
- T3 memory map: the profile's live facts (heaviest kept) and themes, the open threads of
  dreaming, then the topic clusters.
- T4 active retrieval: hybrid (embedding + FTS) search over memories and raw turns.

Tiers only read, through the owners' methods (`Memory`, `Profile`, `tideline.analysis`); nothing
here writes or runs SQL: attention logging and marking questions asked are the provider's (session
memory's summary is its own, derived, table). Sections are not yet fitted to their budgets;
`_block.fit` does that.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path

import numpy as np

from tideline.analysis.prefetch import prefetch_pool
from tideline.analysis.scripts import topic_map
from tideline.consolidate import Dream, SessionMemory
from tideline.consolidate.dream import SelfConcept, Thread
from tideline.inject._block import Item, Part, Section, Tier
from tideline.inject._config import InjectConfig
from tideline.inject._understanding import profile_parts, snapshot_part
from tideline.memory import Memory, Narrative, Turn
from tideline.profile import Profile

STORE_PIPELINE = "the script layer"
GROUNDS_SHOWN = 5  # memory ids shown after a reflection or a thread


def narrative_item(n: Narrative, cap: int | None = None) -> Item:
    text = n.gesture
    if n.context.strip():
        text += "\n" + n.context.strip()
    if n.cognition_direction.strip():
        text += "\n→ " + n.cognition_direction.strip()
    return Item(f"n:{n.id}", text, n.created_at, round(n.weight, 2), cap=cap)


def _narratives(memory: Memory, ids: Sequence[int]) -> list[Narrative]:
    return memory.narratives.get(list(ids))


def _lived(found: Sequence[Narrative]) -> list[Narrative]:
    """Without dreams: a dream is imagined, so it is never injected as something remembered."""
    return [n for n in found if n.kind != "dream"]


# -- T0 ----------------------------------------------------------------------------------------
def t0_identity(
    memory: Memory,
    config: InjectConfig,
    profile: Profile | None = None,
    dream: Dream | None = None,
) -> Tier:
    parts: list[Part] = []
    notes: list[str] = []
    path = config.soul_path
    # t0_soul off: the runtime shows SOUL.md itself, and a second copy would only cost tokens
    if config.t0_soul and path is None:
        notes.append("T0: no SOUL.md path configured (set TIDELINE_SOUL)")
    elif config.t0_soul and path is not None:
        soul = _read_soul(Path(path), notes)
        if soul:
            mtime = date.fromtimestamp(Path(path).stat().st_mtime).isoformat()
            item = Item("soul", soul, mtime, extra=Path(path).name, cap=config.budgets["T0"])
            parts.append(Part(f"who I am ({Path(path).name})", [item], noun="SOUL.md"))
    if profile is not None:
        snapshot = snapshot_part(profile, config, notes)
        if snapshot is not None:
            parts.append(snapshot)
    concept = _self_concept(memory, config, dream)
    if concept:
        parts.append(Part("self-concept (reflections, newest first)", concept))
    elif config.t0_reflections:
        notes.append("T0: no self-concept yet (no memories of kind 'reflection')")
    if not parts:
        return Tier(None, notes)
    return Tier(Section("T0", "identity anchor", parts), notes)


def _self_concept(memory: Memory, config: InjectConfig, dream: Dream | None) -> list[Item]:
    """The latest reflections (newest first: combing writes one only when it is new or has
    changed, so the newest say who the agent is now), each with the memories it rests on."""
    if not config.t0_reflections:
        return []
    if dream is not None:
        found = dream.self_concept(config.t0_reflections)
    else:
        latest = memory.narratives.latest("reflection", config.t0_reflections)
        found = [SelfConcept(n, []) for n in latest]
    items = []
    for c in found:
        item = narrative_item(c.narrative)
        if c.rests_on:
            shown = ", ".join(f"n:{i}" for i in c.rests_on[:GROUNDS_SHOWN])
            more = len(c.rests_on) - GROUNDS_SHOWN
            item.extra = f"rests on {shown}" + (f" +{more}" if more > 0 else "")
        items.append(item)
    return items


def _read_soul(path: Path, notes: list[str]) -> str:
    if not path.is_file():
        notes.append(f"T0: no SOUL.md at {path}; write one to anchor who the agent is")
        return ""
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as exc:
        notes.append(f"T0: SOUL.md at {path} is unreadable ({exc.strerror or exc})")
        return ""
    if not text:
        notes.append(f"T0: SOUL.md at {path} is empty")
    return text


# -- T1 ----------------------------------------------------------------------------------------
def t1_session_bridge(
    memory: Memory,
    config: InjectConfig,
    message: str,
    qvec: np.ndarray | None,
    session: str | None = None,
) -> Tier:
    parts: list[Part] = []
    notes: list[str] = []
    turns = memory.raw.recent(config.t1_recent_turns, session) if config.t1_recent_turns else []
    if turns:
        where = turns[-1].session
        parts.append(
            Part(
                f"recent context (session {where}, last {len(turns)} turns)",
                [turn_item(t) for t in turns],
                sort=True,
                noun="turns",
            )
        )
    elif config.t1_recent_turns:
        notes.append(
            f"T1: session {session!r} has no turns yet" if session else "T1: no turns stored yet"
        )
    hits: list[tuple[int, float]] = []
    if qvec is not None and message.strip() and config.t1_k:
        # `memory_search`'s own: the one retrieval path, its relevance and floor; memories
        # only (T4 brings up turns): a turn's id is no memory's. No memory yet (a Hermes home
        # without a sleep): nothing to find, so its two empty lists are not searched (issue 34)
        if memory.narratives.empty():
            found, floor = [], memory.min_score
        else:
            result = memory.search(message, config.t1_k, qvec=qvec, include_turns=False)
            found, floor = result.hits, result.floor
        lived = {n.id: n for n in _lived(_narratives(memory, [h.id for h in found]))}
        # put into the context unasked: the search's hits that also reach the push threshold
        bar = max(floor, config.min_score)
        shown = [h for h in found if h.id in lived and h.score >= bar]
        hits = [(h.id, round(1.0 - (h.vec_distance or 0.0), 4)) for h in shown]
        if shown:
            items = [narrative_item(lived[h.id]) for h in shown]
            for item, h in zip(items, shown, strict=True):
                item.extra = f"relevance {h.score:.2f}"
            title = f"memories relevant to this message (relevance ≥ {bar:.2f})"
            parts.append(Part(title, items))
        else:
            notes.append(f"T1: no memory is relevant enough to bring up (relevance < {bar:.2f})")
    if not parts:
        return Tier(None, notes, hits)
    return Tier(Section("T1", "session bridge", parts), notes, hits)


def turn_item(t: Turn) -> Item:
    """A turn as every tier shows it (its order, the seq, only sorts a part for display): the
    same text wherever it appears, so its token count is made once (`MemoryProvider.count_ahead`)."""
    return Item(f"t:{t.id}", t.text, t.ts, label=t.speaker or t.role, order=t.seq)


# -- T1s ---------------------------------------------------------------------------------------
def t1s_session_memory(
    memory: Memory,
    sessions: SessionMemory,
    session: str,
    message: str,
    shown: set[int],
    qvec: np.ndarray | None = None,
) -> Tier:
    """Session memory's three layers as parts; T1's own recent turns (`shown`) are not repeated.
    With an LLM, a session that ran past 2 × keep_recent unsummarised turns folds them into its
    summary here (one call); without one the summary is skipped and the notes say so."""
    ctx = sessions.context(session, message, qvec)
    notes = [f"T1s: {n}" for n in ctx.notes]
    parts: list[Part] = []
    if ctx.summary:
        parts.append(Part("summary of this session so far", [Item("summary", ctx.summary)]))
    turns = {t.id: t for t in memory.raw.get([*ctx.recalled, *ctx.recent])}
    for title, ids in (
        ("recalled from earlier in this session (close to the message)", ctx.recalled),
        ("more of the session's recent turns (before the ones in T1)", ctx.recent),
    ):
        items = [turn_item(t) for t in (turns[i] for i in ids if i in turns and i not in shown)]
        if items:
            parts.append(Part(title, items, sort=True, noun="turns"))
    if not parts:
        return Tier(None, notes)
    return Tier(Section("T1s", "session memory", parts), notes)


# -- T2 ----------------------------------------------------------------------------------------
def t2_prefetch_cache(memory: Memory, config: InjectConfig) -> Tier:
    if not config.t2_k:
        return Tier(None)
    pool = prefetch_pool(memory, config.t2_min_weight, config.t2_k, kinds=("narrative",))
    if not pool:
        return Tier(None, [f"T2: no memory weighs {config.t2_min_weight} or more"])
    title = f"heaviest memories (weight ≥ {config.t2_min_weight})"
    return Tier(Section("T2", "prefetch cache", [Part(title, [narrative_item(n) for n in pool])]))


# -- T2b ---------------------------------------------------------------------------------------
def t2b_context_bridge(memory: Memory, config: InjectConfig) -> Tier:
    day = memory.raw.latest_day()
    if day is None:
        return Tier(None, ["T2b: no conversation stored yet"])
    nxt = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    sessions = {sid: memory.raw.session_turns(sid) for sid in memory.raw.sessions_between(day, nxt)}
    best = memory.narratives.heaviest_linked([t.id for turns in sessions.values() for t in turns])
    notes: list[str] = []
    if best:
        nid, weight, linked_ids = best
        linked = set(linked_ids)
        sid = next(s for s, turns in sessions.items() if any(t.id in linked for t in turns))
        why = f"chosen by n:{nid} w={weight:.2f}"
    else:
        sid = next(iter(sessions))  # the session with the day's latest turn
        linked, why = set(), "latest; no memory links to this day's sessions"
        notes.append(f"T2b: no memory links to a session of {day}; showing the latest session")
    turns = sessions[sid]
    anchors = [t.seq for t in turns if t.id in linked]
    items = [turn_item(t) for t in turns]

    def priority(item: Item) -> tuple[float, float]:
        seq = item.order
        near = min((abs(seq - a) for a in anchors), default=0.0)
        return (near, -seq)  # linked turns and their neighbours first, then the latest

    items.sort(key=priority)
    title = f"session {turns[0].session} · {day} · {why}"
    part = Part(title, items, sort=True, noun="turns")
    return Tier(Section("T2b", "context bridge", [part]), notes)


# -- T3 ----------------------------------------------------------------------------------------
def t3_memory_map(
    memory: Memory,
    config: InjectConfig,
    profile: Profile | None = None,
    dream: Dream | None = None,
) -> Tier:
    notes: list[str] = []
    parts: list[Part] = []
    if dream is not None and config.t3_threads:  # first: few, short, and what is in motion
        threads = dream.threads("open", config.t3_threads)
        if threads:
            title = "open threads, last touched first"
            parts.append(Part(title, _thread_items(threads), noun="threads"))
        else:
            notes.append("T3: no open threads yet; `tideline dream` opens them when it combs")
    if profile is not None:
        parts += profile_parts(profile, config, notes)
    rows, total = topic_map(memory, config.t3_clusters) if config.t3_clusters else ([], 0)
    if not rows and config.t3_clusters:
        notes.insert(0, f"T3: no topic clusters yet; {STORE_PIPELINE} builds them")
    items = []
    for r in rows:
        words = [w for w in r["keywords"] if w != r["label"]][:8]
        text = r["label"] + (" — " + ", ".join(words) if words else "")
        items.append(Item(f"topic:{r['id']}", text, r["built_at"], extra=f"n={r['size']}"))
    if items:
        title = f"topics, largest first ({len(items)} of {total})"
        parts.append(Part(title, items, noun="topics"))
    if not parts:
        return Tier(None, notes)
    return Tier(Section("T3", "memory map", parts), notes)


def _thread_items(threads: Sequence[Thread]) -> list[Item]:
    items = []
    for t in threads:
        text = t.title
        if t.why.strip():
            text += " — " + t.why.strip()
        if t.notes:
            text += "\n→ " + t.notes[-1]
        mems = ", ".join(f"n:{m}" for m in t.memories[:GROUNDS_SHOWN])
        extra = f"from {mems}" if mems else ""
        items.append(Item(f"thread:{t.id}", text, t.touched_at, extra=extra))
    return items


# -- T4 ----------------------------------------------------------------------------------------
def t4_active_retrieval(
    memory: Memory,
    config: InjectConfig,
    message: str,
    qvec: np.ndarray | None,
    exclude: Sequence[int] = (),
) -> Tier:
    """Memory search over narratives and raw turns, in one list by relevance (the relevance
    floor leaves out what is not): narratives fused by `config.t4_fusion` (RRF by default: the
    weighted fusion's verbatim check and exact distances cost ~40 ms over 50k turns), turns by
    the tuned turn policy. T1's memories are left out."""
    if not message.strip() or not config.t4_k:
        return Tier(None)
    skip = set(exclude)
    found = memory.search(
        message,
        config.t4_k + len(skip),
        include_turns=True,
        mode="hybrid" if qvec is not None else "lex",
        qvec=qvec,
        narrative_fusion=config.t4_fusion,
    )
    wanted = [h for h in found.hits if h.type == "turn" or h.id not in skip][: config.t4_k]
    ids = [h.id for h in wanted if h.type != "turn"]
    narratives = {n.id: n for n in _lived(_narratives(memory, ids))}
    turns = {t.id: t for t in memory.raw.get([h.id for h in wanted if h.type == "turn"])}
    items = []
    for h in wanted:
        if h.type == "turn" and h.id in turns:
            t = turns[h.id]
            items.append(turn_item(t))
        elif h.type != "turn" and h.id in narratives:
            items.append(narrative_item(narratives[h.id]))
    notes = [] if qvec is not None else ["T4: lexical only (no query vector)"]
    if not items:
        return Tier(None, [*notes, "T4: hybrid search found nothing for this message"])
    title = f"search results for this message ({'embedding + FTS' if qvec is not None else 'FTS'})"
    return Tier(Section("T4", "active retrieval", [Part(title, items)]), notes)
