"""Session memory: the context of one long conversation within a character budget (seed).

Three layers, in this order in the text:
1. sliding summary — older turns compressed by the LLM, kept in `session_summaries` and brought
   up to date incrementally: once more than 2 × `keep_recent` turns follow the summary, all but
   the last `keep_recent` of them (and only those) are folded into it; until then they are shown
   in full as recent turns. At most `summary_ratio` of the budget. The fold is an LLM call, and
   this runs inside the per-turn prefetch, so it runs in a background thread: the prefetch waits
   for it at most `summary_wait` seconds (0.25 s), then goes on with the summary it has and the
   turns in full (newest first, within the budget); a later prefetch picks the new summary up.
   A failing or hanging endpoint costs the prefetch that quarter second, and says so in `notes`.
2. recall — up to `recall_max` earlier turns of the same session most relevant to the current
   message, not already among the recent turns: the turn search inside the session
   (`Memory.search_session`), cut by the one relevance floor of every search; lexical without
   an embedder.
3. recent turns — the last turns in full, newest kept first when the budget runs out.
Without an LLM the summary layer is skipped and `notes` says so.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, TimeoutError
from dataclasses import dataclass, field

import numpy as np

from tideline.clock import now_text
from tideline.consolidate._prompts import prompt
from tideline.consolidate._schemas import SummaryOut
from tideline.consolidate._summaries import SummaryStore
from tideline.llm import LLM, NO_LLM_NOTE, TokenMeter
from tideline.memory import Memory, Turn

RECALL_CHARS = 400  # longest recalled turn
SUMMARY_WAIT = 0.25  # seconds a prefetch waits for the summary's update before going on


@dataclass
class SessionContext:
    text: str
    summary: str = ""
    recalled: list[int] = field(default_factory=list)  # turn ids
    recent: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _line(t: Turn, limit: int | None = None) -> str:
    text = t.text if limit is None or len(t.text) <= limit else t.text[: limit - 1] + "…"
    return f"{t.speaker or t.role}: {text}"


@dataclass(frozen=True)
class SessionLimits:
    """How much of a session its context holds: the `session_<name>` settings (the composition
    root builds it, `tideline.app`)."""

    char_budget: int  # characters of summary + recalled + recent turns together
    keep_recent: int  # the last turns always kept in full
    summary_ratio: float  # the share of the budget the sliding summary may take
    recall_max: int  # most earlier turns recalled by similarity to the message


class SessionMemory:
    def __init__(
        self,
        memory: Memory,
        llm: LLM | None,
        limits: SessionLimits,
        *,
        meter: TokenMeter | None = None,
        summary_wait: float = SUMMARY_WAIT,
    ):
        self.memory = memory
        self.llm = llm
        self.limits = limits
        self.meter = meter
        self.summary_wait = summary_wait
        with memory.lock:  # its migration runs on the connection other threads are using
            self.store = SummaryStore(memory.db)
        self._folding: dict[int, Future[tuple[int, str]]] = {}  # session id → its update
        self._lock = threading.Lock()

    def context(
        self, session_key: str, message: str, qvec: np.ndarray | None = None
    ) -> SessionContext:
        """What the injection layer adds for this session (`.text`, within `char_budget`);
        `qvec` is the message's vector when the caller has embedded it already."""
        turns = self.memory.session_turns(session_key)
        out = SessionContext("")
        if not turns:
            return out
        sid = turns[0].session_id
        with self.memory.lock:
            through, summary = self.store.get(sid)
        window = [t for t in turns if t.id > through]
        if len(window) > 2 * self.limits.keep_recent and self.llm is not None:
            folded = self._fold(sid, summary, window[: -self.limits.keep_recent], out)
            if folded is not None:
                through, summary = folded
                window = [t for t in turns if t.id > through]
        elif len(window) > 2 * self.limits.keep_recent:
            window = window[-self.limits.keep_recent :]
        if self.llm is None and len(turns) > len(window):
            out.notes.append(f"summary {NO_LLM_NOTE}")
        out.summary = summary[: self.summary_cap]
        shown = {t.id for t in window}
        near = self.memory.search_session(
            session_key, message, self.limits.recall_max, exclude=list(shown), qvec=qvec
        )
        recall = [turn for turn, _ in near]
        out.text = self._assemble(out, recall, window)
        return out

    @property
    def summary_cap(self) -> int:
        return int(self.limits.char_budget * self.limits.summary_ratio)

    def _fold(
        self, session_id: int, summary: str, turns: list[Turn], out: SessionContext
    ) -> tuple[int, str] | None:
        """The summary brought up to date through `turns`, if that takes at most `summary_wait`
        seconds; else None (the update goes on in the background, or failed: `notes` say)."""
        with self._lock:
            job = self._folding.get(session_id)
            if job is None:
                job = self._folding[session_id] = Future()
                threading.Thread(
                    target=self._update, args=(job, session_id, summary, turns), daemon=True
                ).start()
        try:
            return job.result(timeout=self.summary_wait)
        except TimeoutError:
            out.notes.append("summary: being brought up to date in the background")
            return None
        except Exception as exc:  # the LLM failed: said here, retried by a later prefetch
            out.notes.append(f"summary not brought up to date: {' '.join(str(exc).split())}")
            return None
        finally:
            with self._lock:
                if job.done() and self._folding.get(session_id) is job:
                    del self._folding[session_id]

    def _update(
        self, job: Future[tuple[int, str]], session_id: int, summary: str, turns: list[Turn]
    ) -> None:
        try:
            job.set_result(self._summarise(session_id, summary, turns))
        except Exception as exc:
            job.set_exception(exc)

    def _summarise(self, session_id: int, summary: str, turns: list[Turn]) -> tuple[int, str]:
        assert self.llm is not None
        p = prompt("session_summary")
        lines = "\n".join(_line(t) for t in turns)
        user = f"## Summary so far\n{summary or '(empty)'}\n\n## Turns that followed\n{lines}"
        result = self.llm.complete(
            [
                {"role": "system", "content": p.text.replace("{max_chars}", str(self.summary_cap))},
                {"role": "user", "content": user},
            ],
            schema=SummaryOut,
            step="session_summary",
            meter=self.meter,
        )
        new = result.data.summary.strip()[: self.summary_cap]
        with self.memory.lock:
            self.store.put(session_id, turns[-1].id, new, p.label, now_text(self.memory.clock))
        return turns[-1].id, new

    def _assemble(self, out: SessionContext, recall: list[Turn], recent: list[Turn]) -> str:
        parts: list[str] = []
        left = self.limits.char_budget
        if out.summary:
            block = f"[Summary of earlier conversation]\n{out.summary}"
            parts.append(block)
            left -= len(block) + 2
        lines = []
        for t in recall:
            line = f"- {_line(t, RECALL_CHARS)}"
            if len(line) + 1 > left - 60:
                break
            lines.append(line)
            out.recalled.append(t.id)
            left -= len(line) + 1
        if lines:
            head = "[Recalled from earlier in this session]"
            parts.append("\n".join([head, *lines]))
            left -= len(head) + 3
        kept: list[str] = []
        head = "[Recent turns]"
        left -= len(head) + 3
        for t in reversed(recent):
            line = _line(t)
            if len(line) + 1 > left:
                if not kept and left > 20:  # the newest turn, cut to what fits
                    kept.append(_line(t, left - 1 - len(line) + len(t.text)))
                    out.recent.insert(0, t.id)
                break
            kept.append(line)
            out.recent.insert(0, t.id)
            left -= len(line) + 1
        if kept:
            parts.append("\n".join([head, *reversed(kept)]))
        return "\n\n".join(parts)[: self.limits.char_budget]
