"""`TidelineProvider`: Tideline as a Hermes Agent memory provider (Hermes's `MemoryProvider`).

Hermes calls it through its `MemoryManager` (agent/memory_manager.py of hermes-agent 0.19):

- `initialize` opens the memory of this profile and user (`tideline.hermes._home`), warms the
  embedder off the agent's thread, and requeues turns a previous run could not keep. Only the
  primary agent writes (`agent_context`: a subagent, cron or flush run reads).
- `system_prompt_block` is the identity block (T0 without SOUL.md, which Hermes shows itself;
  T2, T2b, T3), in Tideline's own frame: Hermes adds it to the system prompt as it is.
- `prefetch` is the per-turn block for the message (T1, T1s, T1p, T1q, T4) without frame or
  fences, since Hermes fences it in `<memory-context>` with its own note; a block warmed by
  `queue_prefetch` for the same message and session, with no turn kept since, is served at once.
  Hermes calls `queue_prefetch` with the turn just finished, so the next message is unknown:
  its embedding and search cannot be done ahead. The warm-up still makes the next turn's
  session-bound work — session memory's summary brought up to date (an LLM call), the
  session's pages read — and the worker counts each kept turn's tokens (`count_ahead`).
- `sync_turn` queues both sides with their times (the user's when the turn started) on the
  provider's worker and returns (the worker also counts their tokens, which the prefetches that
  show them then need not); `on_memory_write` keeps what Hermes's built-in memory tool
  writes as a memory; `on_session_end` starts the sleep after the queued turns, off the agent's
  thread; `on_pre_compress` says what compression must keep; `shutdown` drains the queue.

Hermes runs every hook behind its own guard, yet nothing here raises into it: a dead home (the
database cannot be opened) leaves the blocks empty with one warning, and tools answer with
`{"error": ...}`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.memory_provider import MemoryProvider

from tideline.app import Tideline
from tideline.clock import Clock, now_text
from tideline.config import child_environment
from tideline.errors import TidelineError
from tideline.hermes._home import default_hermes_home, hermes_settings, with_values
from tideline.hermes._queue import PENDING_FILE, Turn, Worker
from tideline.hermes._tools import call_tool, tool_schemas
from tideline.inject import unfenced
from tideline.search import query_vector
from tideline.serve import start_exit_sleep

log = logging.getLogger("tideline.hermes")

NAME = "tideline"
DRAIN_SECONDS = 10.0  # how long `shutdown` waits for queued turns before spooling them
EMPTY_IDENTITY = (
    "# Tideline memory\n"
    "Active, nothing remembered yet. Every turn of every conversation is kept word for word "
    "and recalled before each message; memory_search finds what was said, memory_write keeps "
    "what a later conversation should know."
)
#: Settings `hermes memory setup` asks for (saved to config.yaml, `memory.tideline`).
SETUP_FIELDS = (
    ("llm_base_url", "OpenAI-compatible endpoint for the sleep (empty: rule steps only)", ""),
    ("llm_model", "Model name at that endpoint", ""),
    ("memo_root", "Folder of the markdown notes library (empty: none)", ""),
    ("sleep_on_exit", "Consolidate into the profile when a session ends", "true"),
)


# hermes-agent is untyped, so its ABC is Any to mypy: the tests run the real one
class TidelineProvider(MemoryProvider):  # type: ignore[misc]
    """Tideline behind Hermes's memory-provider hooks (see the module docstring)."""

    def __init__(self, *, clock: Clock, drain_seconds: float = DRAIN_SECONDS) -> None:
        self.drain_seconds = drain_seconds  # how long `shutdown` waits for queued turns
        self.clock = clock  # the turns' times: a replay (bench/hermes_reach.py) sets its own
        self.app: Tideline | None = None
        self.hermes_home: Path | None = None
        self.session = ""
        self.primary = True
        self.user_name: str | None = None
        self.overrides: dict[str, Any] = {}
        self.worker: Worker | None = None
        self.turn_started: tuple[str, str] | None = None  # (the message, when it came)
        self.kept = 0  # turns kept so far: a warmed prefetch older than the last one is stale
        self.warm: dict[tuple[str, str], tuple[int, str]] = {}
        self.warm_lock = threading.Lock()

    # -- what Hermes asks first ----------------------------------------------------------------
    @property
    def name(self) -> str:
        return NAME

    def is_available(self) -> bool:
        return True  # local files only: nothing to check before `initialize`

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        if self.app is not None:  # initialised again: the earlier session's queue first
            self.shutdown()
        hermes_home = Path(str(kwargs.get("hermes_home") or default_hermes_home()))
        self.hermes_home = hermes_home
        self.session = session_id or self.session
        self.primary = kwargs.get("agent_context", "primary") == "primary"
        self.user_name = kwargs.get("user_name") or None
        try:
            settings, self.overrides = hermes_settings(
                hermes_home,
                str(kwargs.get("agent_identity") or ""),
                str(kwargs.get("user_id") or ""),
            )
            app = Tideline(settings, clock=self.clock)
            app.memory  # noqa: B018 - open the database now: a dead home fails here, not mid-turn
        except Exception as exc:
            self._dead(f"Tideline memory is off for this session: {exc}", kwargs)
            return
        self.app = app
        if self.primary:
            self.worker = Worker(self._keep, settings.home / PENDING_FILE)
        threading.Thread(target=self._warm_up, name="tideline-warm-up", daemon=True).start()

    # -- the blocks ----------------------------------------------------------------------------
    def system_prompt_block(self) -> str:
        if self.app is None:
            return ""
        block = self.app.provider.identity()  # read under the memory's lock
        return block.text if block.sections else EMPTY_IDENTITY

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if self.app is None:
            return ""
        session = session_id or self.session
        with self.warm_lock:
            warmed = self.warm.pop((session, query), None)
        if warmed is not None and warmed[0] == self.kept:
            return warmed[1]
        return self._prefetch(query, session)

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        if self.app is None or not query.strip():
            return
        session = session_id or self.session

        def warm() -> None:
            kept = self.kept
            text = self._prefetch(query, session)
            with self.warm_lock:
                self.warm = {(session, query): (kept, text)}  # only the next turn's

        self._later(warm)

    # -- keeping turns -------------------------------------------------------------------------
    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        self.turn_started = (message, now_text(self.app.clock)) if self.app else None

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        if self.app is None or self.worker is None:
            return
        session = session_id or self.session
        now = now_text(self.app.clock)
        # the time the message came, when this is its turn (Hermes syncs on a worker of its
        # own, so the next turn may have started by now)
        started, when = self.turn_started or ("", "")
        said = when if started == user_content else now
        user = _named("user", user_content, messages) or self.user_name
        if user_content.strip():
            self.worker.put(Turn(session, "user", user_content, said, user))
        if assistant_content.strip():
            speaker = _named("assistant", assistant_content, messages)
            self.worker.put(Turn(session, "assistant", assistant_content, now, speaker))

    def on_memory_write(
        self,
        action: str,
        target: str,
        content: str,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """What Hermes's built-in memory tool adds or replaces becomes a memory here too, so a
        search finds it beside the conversation it came from."""
        if self.app is None or self.worker is None or action not in ("add", "replace"):
            return
        if not content.strip():
            return
        about = "the user" if target == "user" else "the agent's notes"
        app = self.app

        def write() -> None:
            app.memory.write(
                gesture=content,
                context=f"written to {about} by Hermes's memory tool ({action})",
                tags=["hermes-memory", target],
            )

        self._later(write)

    # -- the session's boundaries --------------------------------------------------------------
    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        if new_session_id:
            self.session = new_session_id
        self.turn_started = None
        with self.warm_lock:
            self.warm.clear()

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        """Start the sleep once the turns queued so far are kept, on the worker: the agent's
        thread goes on at once, and the sleep runs as its own process (`sleep_on_exit`)."""
        app = self.app
        if app is None or self.worker is None or not app.settings.sleep_on_exit:
            return
        env = child_environment(self.overrides)
        self._later(lambda: start_exit_sleep(app.settings, "the Hermes session ended", env))

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """What the summary must keep: that every turn is kept word for word (so compression
        loses no fact for good), and the session's summary when session memory has one."""
        if self.app is None:
            return ""
        lines = [
            f"Tideline keeps every turn of session {self.session} word for word: what this "
            "summary leaves out is found again with memory_search (include_turns=true)."
        ]
        asked = next(
            (str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
        )
        try:
            summary = self.app.session_memory.context(self.session, asked).summary
        except Exception as exc:  # the compression goes on without it
            log.warning("no session summary for the compression: %s", exc)
            summary = ""
        if summary:
            lines.append(f"What this session has covered so far: {summary}")
        return "\n".join(lines)

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        """A subagent's task and answer are part of this conversation: kept as a tool turn."""
        if self.app is None or self.worker is None:
            return
        now = now_text(self.app.clock)
        text = f"Delegated to a subagent: {task}\n\nIts answer: {result}"
        self.worker.put(Turn(self.session, "tool", text, now, "subagent"))

    # -- tools ---------------------------------------------------------------------------------
    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return tool_schemas()

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        if self.app is None:
            return '{"error": "Tideline memory is off for this session (see the log)"}'
        return call_tool(self.app, tool_name, args or {}, may_write=self.primary)

    # -- setup, backup, shutdown ---------------------------------------------------------------
    def get_config_schema(self) -> list[dict[str, Any]]:
        return [{"key": k, "description": d, "default": v} for k, d, v in SETUP_FIELDS]

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        with_values(values, Path(hermes_home))

    def backup_paths(self) -> list[str]:
        """The memory's home when it lies outside $HERMES_HOME (`home` set elsewhere): `hermes
        backup` walks $HERMES_HOME itself. Read from the config alone, as Hermes asks."""
        hermes_home = self.hermes_home or default_hermes_home()
        try:
            settings, _ = hermes_settings(hermes_home)
        except TidelineError as exc:
            log.warning("Tideline: no backup path: %s", exc)
            return []
        home = settings.home.expanduser().resolve()
        return [] if home.is_relative_to(hermes_home.resolve()) else [str(home)]

    def shutdown(self) -> None:
        if self.worker is not None and not self.worker.drain(self.drain_seconds):
            log.warning("Tideline: turns still queued at exit were spooled for the next start")
        self.worker = None
        if self.app is not None:
            self.app.close()
            self.app = None

    # -- internals -----------------------------------------------------------------------------
    def _keep(self, turn: Turn) -> None:
        assert self.app is not None
        kept = self.app.memory.sync_turn(
            turn.session, turn.role, turn.text, speaker=turn.speaker, timestamp=turn.timestamp
        )
        self.kept += 1
        self.app.provider.count_ahead([kept.id])  # here, not in the next turn's prefetch

    def _prefetch(self, query: str, session: str) -> str:
        assert self.app is not None
        block = self.app.provider.prefetch_block(query, session or None)  # under its lock
        for note in block.notes:
            log.debug("prefetch: %s", note)
        return unfenced(block)

    def _later(self, job: Callable[[], object]) -> None:
        """Run `job` on the worker after the queued turns (inline when this agent never
        writes, so has no worker)."""
        if self.worker is not None:
            self.worker.put(job)
        else:
            job()

    def _warm_up(self) -> None:
        """Load the embedding model before the first message, so the first prefetch is as
        fast as the next ones (Hermes gives a prefetch 8 s)."""
        app = self.app
        try:
            if app is not None:
                query_vector(app.embedder, "warm up")
        except Exception as exc:
            log.warning("Tideline: the embedder could not be warmed up: %s", exc)

    def _dead(self, message: str, kwargs: dict[str, Any]) -> None:
        log.warning(message)
        warn = kwargs.get("warning_callback")
        if callable(warn):
            warn(message)


def _named(role: str, text: str, messages: list[dict[str, Any]] | None) -> str | None:
    """The `name` the conversation gives the message of `role` that said `text` (OpenAI
    messages may name their speaker: a group chat's members), else None."""
    for message in reversed(messages or []):
        if message.get("role") == role and message.get("content") == text:
            name = message.get("name")
            return str(name) if name else None
    return None
