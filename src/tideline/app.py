"""`Tideline`: the composition root's product — one agent's database, embedder and services.

Drivers (CLI, MCP server, provider hooks) build one `Tideline` from `Settings` and call its
services; this is the only place that turns settings into services (search policies, the
library, the injection provider), and nothing here reads the environment. Everything opens
lazily: a command that only lists sessions never loads the embedding model, and a server
without a library root still starts. So do the imports of what a command may not need (Sleep,
DREAM, the LLM clients, the library, injection): a `tideline search` pays for none of them.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO, cast

from tideline import plugins
from tideline.analysis import ANALYSIS_MIGRATIONS
from tideline.clock import Clock, now_text, system_clock
from tideline.config import Settings
from tideline.embed import Embedder, load_embedder
from tideline.errors import ConfigError, InvalidInput, TidelineError
from tideline.memory import (
    AGENT_MIGRATIONS,
    NARRATIVES,
    TURNS,
    Memory,
    header,
    write_export,
)
from tideline.profile import PROFILE_MIGRATIONS, Profile, Rules
from tideline.search import ANALYSERS, Analyser, VectorOptions, resolve_floor
from tideline.store import (
    Namespace,
    Storage,
    is_postgres_url,
    open_database,
    open_postgres,
)

if TYPE_CHECKING:
    from tideline.consolidate import Dream, Sleep
    from tideline.inject import MemoryProvider
    from tideline.library import Library
    from tideline.llm import LLM

log = logging.getLogger(__name__)


def centring(s: Settings) -> str:
    """Which searches centre the query vector (`search_centre`): the library only (the default:
    on LoCoMo's conversations centring is a wash, docs/benchmarks.md), all, or none."""
    if s.search_centre not in ("library", "all", "off"):
        raise ConfigError(f"search_centre={s.search_centre!r} is unknown; use library, all or off")
    return s.search_centre


def integrity_seconds(s: Settings) -> float | None:
    """How often memory.db is checked whole without being asked (`integrity_check_hours`;
    negative: never, only `tideline doctor` checks)."""
    return None if s.integrity_check_hours < 0 else s.integrity_check_hours * 3600


def library_options(s: Settings) -> dict[str, Any]:
    """How a `Library` built from these settings ranks and keeps fresh: pass as
    `Library(root, embedder, **library_options(settings))`."""
    from tideline.library import LIBRARY

    return {
        "policy": replace(
            LIBRARY,
            rrf_k=s.library_rrf_k,
            weights=(1.0, s.library_vector_weight),
            centre=centring(s) != "off",
            trust_floor=s.library_lex_floor,
        ),
        "keys": s.library_keys,
        "catch_up": s.library_catch_up,
        "min_score": s.search_min_score,
        "busy_timeout_ms": s.busy_timeout_ms,
    }


def vector_options(s: Settings) -> VectorOptions:
    """How memory's indexes find vector candidates at scale."""
    if s.vector_index_min < 0 or not 0 <= s.vector_ef_search <= 1000:
        raise ConfigError(
            f"vector_index_min={s.vector_index_min}, vector_ef_search={s.vector_ef_search}:"
            " the first must be 0 or more, the second 0 (per query) to 1000"
        )
    return VectorOptions(file_min=s.vector_index_min, ef_search=s.vector_ef_search)


class Tideline:
    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, clock: Clock = system_clock
    ):
        self.settings = settings
        # The one clock every service reads "now" from (a `ManualClock` replays history).
        self.clock = clock
        plugins.configure(settings.plugins, settings.trace_plugins)
        # One connection, possibly many threads (MCP workers): its users take turns through this.
        self.db_lock = threading.RLock()
        # The library's users (MCP tools, the web panel, in one process) take turns through this.
        self.library_lock = threading.Lock()
        if embedder is not None:
            self.__dict__["embedder"] = embedder

    @cached_property
    def db(self) -> Storage:
        s = self.settings
        if s.database_url:
            if not is_postgres_url(s.database_url):
                raise InvalidInput(
                    "TIDELINE_DATABASE_URL must start with postgresql://; unset it to keep the"
                    " agent database in <home>/memory.db"
                )
            namespace = Namespace(s.agent_name, s.database_user or None)
            return open_postgres(
                s.database_url, namespace, AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS, PROFILE_MIGRATIONS
            )
        return open_database(
            self.settings.db_path,
            AGENT_MIGRATIONS,
            ANALYSIS_MIGRATIONS,
            PROFILE_MIGRATIONS,  # the profile's tables live in the agent database too
            busy_timeout_ms=self.settings.busy_timeout_ms,
            remember_damage=True,  # the one copy of a memory: stop at the first bad page
            check_every=integrity_seconds(self.settings),
        )

    @cached_property
    def embedder(self) -> Embedder | None:
        """The configured embedder, or None (with a logged reason) when it cannot be built."""
        try:
            return load_embedder(self.settings)
        except TidelineError as exc:
            log.warning("no embedder, search is lexical only: %s", exc)
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
            # the settings tune memory's policies (docs/configuration.md, docs/search.md)
            narrative_policy=replace(
                NARRATIVES, boost=s.keyword_boost, stop_words=stop, centre=centring(s) == "all"
            ),
            turn_policy=replace(
                TURNS,
                fusion=cast(Literal["rrf", "convex"], s.turn_fusion),
                rrf_k=s.turn_rrf_k,
                weights=(1.0, s.turn_vector_weight),
                stop_words=stop,
                alpha=s.turn_alpha,
                centre=centring(s) == "all",
                date_weight=s.turn_date_weight,
                memory_weight=s.turn_memory_weight,
                speaker_weight=s.turn_speaker_weight,
                session_weight=s.turn_session_weight,
                session_cap=s.turn_session_cap,
                truncate=s.search_truncate,
            ),
            min_score=resolve_floor(
                s.search_min_score, self.embedder.model_id if self.embedder else None
            ),
            lock=self.db_lock,
            analyser=cast(Analyser, s.search_analyser),
            turn_context=s.turn_context,
            vectors=vector_options(s),
            clock=self.clock,
        )

    @cached_property
    def profile(self) -> Profile:
        s = self.settings
        rules = Rules(
            established_sessions=s.profile_established_sessions,
            established_days=s.profile_established_days,
            strategy_days=s.profile_strategy_days,
        )
        return Profile(self.db, self.memory, clock=self.clock, lock=self.db_lock, rules=rules)

    @cached_property
    def library(self) -> Library:
        """The markdown library at `memo_root`; its own databases live under the root."""
        from tideline.library import Library

        root = self.settings.memo_root
        if root is None or not str(root):
            raise InvalidInput(
                f"{self.settings.agent_name} has no library root: pass --root PATH or set "
                "MEMO_ROOT (memo_root in config.toml); a namespace of a shared server gets its "
                "own from 'library' in its tokens file entry (docs/web.md)"
            )
        return Library(root, self.embedder, **library_options(self.settings))

    @cached_property
    def provider(self) -> MemoryProvider:
        """The injection hooks (T0–T4) over this memory, its profile, session memory and
        dreaming."""
        from tideline.consolidate import SessionMemory
        from tideline.inject import InjectConfig, MemoryProvider
        from tideline.llm import llm_from_settings

        model_id = self.embedder.model_id if self.embedder is not None else None
        return MemoryProvider(
            self.memory,
            InjectConfig.from_settings(self.settings, model_id),
            profile=self.profile,
            session_memory=SessionMemory.from_settings(
                self.memory, llm_from_settings(self.settings), self.settings
            ),
            dream=self.dream,  # the self-concept with its grounds (T0), open threads (T3)
        )

    @cached_property
    def sleep(self) -> Sleep:
        """The Sleep pipeline over the profile and memory, with the configured LLM."""
        from tideline.llm import llm_from_settings

        return self.sleep_using(llm_from_settings(self.settings))

    def sleep_using(self, llm: LLM | None, no_llm: str | None = None) -> Sleep:
        """The Sleep pipeline with another LLM (the MCP client's model, through sampling), or
        none and why (`no_llm`, by default `NO_LLM`); the budget and input cap stay the
        configured ones."""
        from tideline.consolidate import Sleep
        from tideline.llm import NO_LLM

        s = self.settings
        return Sleep(
            self.profile,
            self.memory,
            llm,
            embedder=self.embedder,
            run_budget=s.llm_run_budget,
            run_max_calls=s.llm_run_max_calls,
            max_input_tokens=s.llm_max_input_tokens,
            no_llm=NO_LLM if no_llm is None else no_llm,
        )

    def export(self, out: TextIO, fmt: str = "jsonl") -> dict[str, int]:
        """Everything this agent remembers — sessions, turns, narratives, the profile — as a
        Tideline export (JSONL, which `tideline import` restores, or markdown to read).
        Returns how many records of each type were written."""
        records = chain(
            [header(self.settings.agent_name, now_text(self.clock))],
            self.memory.export_records(),
            self.profile.dump(),
        )
        return write_export(records, out, fmt)

    @cached_property
    def dream(self) -> Dream:
        """The DREAM pipeline (solidify → sleep → scripts → comb → drift → dream), its
        threads and self-concept, with the configured LLM."""
        from tideline.llm import llm_from_settings

        return self.dream_using(llm_from_settings(self.settings))

    def dream_using(self, llm: LLM | None, no_llm: str | None = None) -> Dream:
        """The DREAM pipeline with another LLM (the MCP client's model, through sampling), or
        none and why (`no_llm`, by default `NO_LLM`); the budget and limits stay the
        configured ones."""
        from tideline.consolidate import Dream
        from tideline.llm import NO_LLM

        s = self.settings
        return Dream(
            self.profile,
            self.memory,
            llm,
            embedder=self.embedder,
            run_budget=s.dream_run_budget,
            run_max_calls=s.llm_run_max_calls,
            max_input_tokens=s.llm_max_input_tokens,
            comb_memories=s.dream_comb_memories,
            drift_hops=s.dream_drift_hops,
            no_llm=NO_LLM if no_llm is None else no_llm,
        )

    def private_paths(self) -> list[tuple[Path, str]]:
        """The server's folders and the names a token holder sees instead (`hide_paths`): an
        error sent over HTTP must not show where the server keeps its files."""
        s = self.settings
        found = [(s.home.expanduser(), "<home>"), (s.cache_path.expanduser(), "<embedding cache>")]
        if s.memo_root is not None and str(s.memo_root):
            found.append((s.memo_root.expanduser(), "<library>"))
        return [(p.resolve(), label) for p, label in found] + found

    def close(self) -> None:
        """The library, then the database (whatever was opened)."""
        if "library" in self.__dict__:
            self.library.close()
        if "memory" in self.__dict__:
            self.memory.close()
        if "db" in self.__dict__:
            self.db.close()
