"""`Tideline`: the composition root's product — one agent's database, embedder and services.

Drivers (CLI, MCP server, provider hooks) build one `Tideline` from `Settings` and call its
services; nothing here reads the environment. Everything opens lazily: a command that only lists
sessions never loads the embedding model.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import Any, Literal, cast

from tideline.analysis import ANALYSIS_MIGRATIONS
from tideline.config import Settings
from tideline.consolidate import Sleep
from tideline.embed import Embedder, load_embedder
from tideline.errors import ConfigError, TidelineError
from tideline.inject import InjectConfig, MemoryProvider
from tideline.llm import llm_from_settings
from tideline.memory import AGENT_MIGRATIONS, Memory, TurnLevers
from tideline.profile import PROFILE_MIGRATIONS, Profile
from tideline.search import ANALYSERS, Analyser, Policy
from tideline.store import Database, open_database


def library_options(s: Settings) -> dict[str, Any]:
    """How a `Library` built from these settings ranks and keeps fresh: pass as
    `Library(root, embedder, **library_options(settings))`."""
    policy = Policy(
        rrf_k=s.library_rrf_k,
        weights=(1.0, s.library_vector_weight),
        ties="competition",
        trigram="fallback",
        literal_dashes=True,
    )
    return {
        "policy": policy,
        "keys": s.library_keys,
        "catch_up": s.library_catch_up,
        "lex_floor": s.library_lex_floor,
        "busy_timeout_ms": s.busy_timeout_ms,
    }


class Tideline:
    def __init__(self, settings: Settings, embedder: Embedder | None = None):
        self.settings = settings
        # One connection, possibly many threads (MCP workers): its users take turns through this.
        self.db_lock = threading.RLock()
        if embedder is not None:
            self.__dict__["embedder"] = embedder

    @cached_property
    def db(self) -> Database:
        return open_database(
            self.settings.db_path,
            AGENT_MIGRATIONS,
            ANALYSIS_MIGRATIONS,
            PROFILE_MIGRATIONS,
            busy_timeout_ms=self.settings.busy_timeout_ms,
            remember_damage=True,  # the one copy of a memory: stop at the first bad page
        )

    @cached_property
    def embedder(self) -> Embedder | None:
        """The configured embedder, or None (with a logged reason) when it cannot be built."""
        try:
            return load_embedder(self.settings)
        except TidelineError as exc:
            import logging

            logging.getLogger(__name__).warning("no embedder, search is lexical only: %s", exc)
            return None

    @cached_property
    def memory(self) -> Memory:
        s = self.settings
        if s.search_analyser not in ANALYSERS:
            raise ConfigError(
                f"search_analyser={s.search_analyser!r} is unknown; use one of {list(ANALYSERS)}"
            )
        if s.turn_fusion not in ("rrf", "convex"):
            raise ConfigError(f"turn_fusion={s.turn_fusion!r} is unknown; use rrf or convex")
        stop = s.search_stop_words
        return Memory(
            self.db,
            self.embedder,
            narrative_policy=Policy(fusion="weighted", boost=s.keyword_boost, stop_words=stop),
            turn_policy=Policy(
                cast(Literal["rrf", "convex"], s.turn_fusion),
                rrf_k=s.turn_rrf_k,
                weights=(1.0, s.turn_vector_weight),
                stop_words=stop,
                alpha=s.turn_alpha,
            ),
            lock=self.db_lock,
            analyser=cast(Analyser, s.search_analyser),
            turn_levers=TurnLevers(s.turn_date_weight, s.turn_memory_weight, s.turn_session_cap),
            turn_context=s.turn_context,
        )

    @cached_property
    def provider(self) -> MemoryProvider:
        model_id = self.embedder.model_id if self.embedder is not None else None
        return MemoryProvider(self.memory, InjectConfig.from_settings(self.settings, model_id))

    @cached_property
    def profile(self) -> Profile:
        return Profile(self.db, self.memory, lock=self.db_lock)

    @cached_property
    def sleep(self) -> Sleep:
        s = self.settings
        return Sleep(
            self.profile,
            self.memory,
            llm_from_settings(s),
            embedder=self.embedder,
            run_budget=s.llm_run_budget,
            max_input_tokens=s.llm_max_input_tokens,
        )

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()
