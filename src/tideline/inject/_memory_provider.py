"""`MemoryProvider`: the two hooks an agent runtime calls — at session start and on every turn.

`system_prompt_block()` assembles T0, T2, T2b and T3 (the identity block); `prefetch(message,
session)` assembles T1, T1s (session memory, with a session key), T1p (the profile's facts the
message touches and their graph neighbours), T1q (an open question) and, when T1 retrieved fewer
memories than `t4_trigger`, T4 — and logs T1's hits to `attention_log` and marks the question it
offered `asked`. Both return a fenced, budgeted text; `identity()` and `prefetch_block()` return
the same as a `Block` for drivers that want JSON. The profile, session memory and the dream
layers are optional: without them their parts are left out (without the dream layers T0 still
shows the latest reflections, without their grounds, and T3 no threads). A dream (kind `dream`)
is never injected: it is imagined, not remembered.

These run in the agent's hot path, so they never raise: a tier that fails (a locked database, a
dead embedder, a corrupt row) is left out and the block's notes say why; the failure is logged
with its traceback. The clock is injected (`clock=`), so tests and replays are deterministic.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from tideline.analysis.attention import log_hits
from tideline.clock import Clock, now_text
from tideline.consolidate import Dream, SessionMemory
from tideline.errors import TidelineError
from tideline.inject._block import Block, Section, Tier, fit, render_block
from tideline.inject._budget import TokenCounter
from tideline.inject._config import InjectConfig
from tideline.inject._tiers import (
    t0_identity,
    t1_session_bridge,
    t1s_session_memory,
    t2_prefetch_cache,
    t2b_context_bridge,
    t3_memory_map,
    t4_active_retrieval,
    turn_item,
)
from tideline.inject._understanding import t1p_profile_bridge, t1q_questions
from tideline.memory import Memory
from tideline.profile import Profile
from tideline.search import query_vector, valid_text

log = logging.getLogger(__name__)

IDENTITY_TIERS = ("T0", "T2", "T2b", "T3")
PREFETCH_TIERS = ("T1", "T1s", "T1p", "T1q", "T4")
NO_PROFILE = (
    "profile: none attached, so no snapshot (T0), facts (T3, T1p) or questions (T1q); "
    "pass MemoryProvider(..., profile=...)"
)
MAX_MESSAGE_CHARS = 4_000  # a query longer than this is cut: the embedder sees 512 tokens anyway


class MemoryProvider:
    """T0–T4 injection over one agent's `Memory`."""

    def __init__(
        self,
        memory: Memory,
        config: InjectConfig,
        *,
        profile: Profile | None = None,
        session_memory: SessionMemory | None = None,
        dream: Dream | None = None,
        clock: Clock | None = None,
    ):
        self.memory = memory
        self.config = config
        self.profile = profile
        self.session_memory = session_memory
        self.dream = dream
        self.clock = clock or memory.clock  # the app's one clock (`tideline.clock`)
        self.count = TokenCounter(memory.embedder)

    # -- the hooks -----------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        """The identity block for the start of a session: T0, T2, T2b, T3."""
        return self.identity().text

    def prefetch(self, message: str, session: str | None = None) -> str:
        """The per-turn block for `message` (in conversation `session`, when given): T1, T1s,
        T1p, T1q, then T4 if T1 found too little."""
        return self.prefetch_block(message, session).text

    def count_ahead(self, turn_ids: Sequence[int]) -> None:
        """Count these turns as a prefetch shows them (T1's recent context, T1s, T4), so the
        prefetch that shows them finds their counts made. A runtime calls it off the agent's
        thread when it keeps a turn (Hermes's worker): the tokenizer (~1.5 µs a character with
        e5) then costs the agent's wait nothing. Best effort: a failure is only logged."""
        try:
            with self.memory.lock:
                turns = self.memory.raw.get(turn_ids)
            for turn in turns:
                self.count(turn_item(turn).render() + "\n")
        except Exception as exc:  # the turn is kept; its count is made later, when shown
            log.warning("turns not counted ahead: %s", exc)

    # -- structured versions -------------------------------------------------------------------
    def identity(self) -> Block:
        """The identity block, its tiers read under the memory's lock (one connection, and a
        runtime's worker keeps turns on it meanwhile): drivers call this from any thread."""
        with self.memory.lock:
            return self._identity()

    def _identity(self) -> Block:
        notes: list[str] = [] if self.profile is not None else [NO_PROFILE]
        sections = [
            self._run(tier, fn, notes)
            for tier, fn in (
                ("T0", lambda: t0_identity(self.memory, self.config, self.profile, self.dream)),
                ("T2", lambda: t2_prefetch_cache(self.memory, self.config)),
                ("T2b", lambda: t2b_context_bridge(self.memory, self.config)),
                ("T3", lambda: t3_memory_map(self.memory, self.config, self.profile, self.dream)),
            )
        ]
        return self._block("identity", sections, notes, IDENTITY_TIERS)

    def prefetch_block(self, message: str, session: str | None = None) -> Block:
        """The turn's block, under the memory's lock like `identity` (its attention is logged on
        the same connection)."""
        with self.memory.lock:
            return self._prefetch_block(message, session)

    def _prefetch_block(self, message: str, session: str | None) -> Block:
        notes: list[str] = []
        message = valid_text(message) if isinstance(message, str) else ""
        if not message.strip():
            notes.append("prefetch: the message is empty; nothing to retrieve for it")
        query = message[:MAX_MESSAGE_CHARS]
        qvec = self._query_vector(query, notes) if query.strip() else None
        t1 = Tier(None)

        def run_t1() -> Tier:
            nonlocal t1
            t1 = t1_session_bridge(self.memory, self.config, query, qvec, session)
            return t1

        sections = [self._run("T1", run_t1, notes)]
        if session and self.session_memory is not None:
            sections.append(self._session_memory(session, query, qvec, sections[0], notes))
        if self.profile is not None and query.strip():
            sections += self._understanding(self.profile, query, qvec, notes)
        retrieved = len(t1.hits)
        if query.strip() and retrieved < self.config.t4_trigger:
            notes.append(
                f"T4: ran because T1 retrieved {retrieved} memories "
                f"(fewer than {self.config.t4_trigger})"
            )
            sections.append(
                self._run(
                    "T4",
                    lambda: t4_active_retrieval(
                        self.memory, self.config, query, qvec, [i for i, _ in t1.hits]
                    ),
                    notes,
                )
            )
        if t1.hits:
            self._log_attention(t1.hits, query, notes)
        block = self._block("prefetch", sections, notes, PREFETCH_TIERS)
        block.query = message
        return block

    # -- the parts that need the profile or session memory ---------------------------------------
    def _session_memory(
        self,
        session: str,
        query: str,
        qvec: np.ndarray | None,
        t1: Section | None,
        notes: list[str],
    ) -> Section | None:
        assert self.session_memory is not None
        sessions = self.session_memory
        shown = {int(i.ref[2:]) for i in t1.items if i.ref.startswith("t:")} if t1 else set()
        return self._run(
            "T1s",
            lambda: t1s_session_memory(self.memory, sessions, session, query, shown, qvec),
            notes,
        )

    def _understanding(
        self, profile: Profile, query: str, qvec: np.ndarray | None, notes: list[str]
    ) -> list[Section | None]:
        """T1p, then T1q with the facts T1p touched; what T1q shows is marked asked."""
        t1p = Tier(None)

        def run_t1p() -> Tier:
            nonlocal t1p
            t1p = t1p_profile_bridge(profile, self.config, query, qvec)
            return t1p

        facts = self._run("T1p", run_t1p, notes)
        question = self._run(
            "T1q", lambda: t1q_questions(profile, self.config, query, t1p.facts, qvec), notes
        )
        if question is not None:
            self._mark_asked(profile, question, notes)
        return [facts, question]

    def _mark_asked(self, profile: Profile, section: Section, notes: list[str]) -> None:
        ids = [int(i.ref[2:]) for i in section.items]
        try:
            profile.mark_asked(ids)
        except Exception as exc:  # the agent still gets its question; it may come again
            log.warning("questions not marked asked: %s", exc)
            notes.append(f"T1q: not marked asked ({type(exc).__name__}); it may be offered again")

    # -- internals -----------------------------------------------------------------------------
    def _run(self, tier: str, build: Callable[[], Tier], notes: list[str]) -> Section | None:
        """Build and fit one tier; any failure becomes a note, never an exception."""
        try:
            result = build()
            notes += result.notes
            if result.section is None:
                return None
            budget = self.config.budgets[tier]
            before = len(result.section.items)
            nouns = {p.noun for p in result.section.parts}
            fitted = fit(result.section, budget, self.config.item_tokens, self.count)
            if fitted is None:
                notes.append(
                    f"{tier}: its budget of {budget} tokens is too small for any of "
                    f"{before} items; raise inject_budget_{tier.lower()}"
                )
                return None
            if fitted.cut or fitted.trimmed:
                noun = nouns.pop() if len(nouns) == 1 else "items"
                what = []
                if fitted.cut:
                    what.append(f"{fitted.cut} of {before} {noun} cut")
                if fitted.trimmed:
                    what.append(f"{fitted.trimmed} shortened")
                notes.append(f"{tier}: {' and '.join(what)} to fit {budget} tokens")
            neutralised = [i.ref for i in fitted.items if i.neutralised]
            if neutralised:
                notes.append(
                    f"{tier}: neutralised text that tried to close the fence or pose as a "
                    f"message in {', '.join(neutralised)}"
                )
            return fitted
        except Exception as exc:  # the agent's turn must go on without this tier
            log.exception("tier %s failed", tier)
            notes.append(f"{tier}: left out, it failed ({type(exc).__name__}: {exc})")
            return None

    def _block(
        self, kind: str, sections: Sequence[Section | None], notes: list[str], tiers: Sequence[str]
    ) -> Block:
        kept = [s for s in sections if s is not None]
        if self.count.warning:
            notes.append(self.count.warning)
        block = Block(
            kind=kind,
            agent=self.config.agent_name,
            at=now_text(self.clock),
            sections=kept,
            notes=list(dict.fromkeys(notes)),
            token_method=self.count.method,
            budget=sum(self.config.budgets[t] for t in tiers),
        )
        try:
            return render_block(block, self.count)
        except Exception as exc:  # pragma: no cover - rendering is pure; keep the hook alive
            log.exception("rendering the %s block failed", kind)
            block.sections, block.notes = [], [f"the block could not be rendered ({exc})"]
            return render_block(block, TokenCounter())

    def _query_vector(self, message: str, notes: list[str]) -> np.ndarray | None:
        embedder = self.memory.embedder
        if embedder is None or embedder.model_id == "none":
            notes.append("no embedder: T1 retrieves nothing by meaning, T4 searches words only")
            return None
        stored = self.memory.narratives.index.model_id
        if stored is not None and stored != embedder.model_id:
            notes.append(
                f"memories were embedded with {stored}, the embedder is {embedder.model_id}; "
                "search is lexical until `tideline embed` re-embeds them"
            )
            return None
        try:
            qvec, warning = query_vector(embedder, message)
        except TidelineError as exc:
            qvec, warning = None, f"vector search skipped, results are lexical only: {exc}"
        if warning:
            notes.append(f"embedder unavailable: {warning}")
        return qvec

    def _log_attention(self, hits: list[tuple[int, float]], query: str, notes: list[str]) -> None:
        try:
            log_hits(self.memory, hits, query, source="prefetch", at=now_text(self.clock))
        except Exception as exc:  # bookkeeping must never cost the agent its turn
            log.warning("attention log not written: %s", exc)
            notes.append(f"attention log not written ({type(exc).__name__})")
