"""`Tideline`: the composition root's product — one agent's database, embedder and services.

Drivers (CLI, MCP server, provider hooks) build one `Tideline` from `Settings` and call its
services; this is the only place that turns settings into services (the embedder, the one LLM
client, search policies, the library, session memory, the injection provider, the Sleep that a
dream runs), and nothing here reads the environment. Everything opens
lazily: a command that only lists sessions never loads the embedding model, and a server
without a library root still starts. So do the imports of what a command may not need (Sleep,
DREAM, the LLM clients, the library, injection): a `tideline search` pays for none of them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import fields, replace
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    TextIO,
    TypedDict,
    TypeVar,
    cast,
    overload,
)

from tideline import plugins
from tideline.analysis import ANALYSIS_MIGRATIONS
from tideline.clock import Clock, now_text, system_clock
from tideline.config import Settings
from tideline.embed import CachedEmbedder, Embedder, embedder_factories
from tideline.errors import InvalidInput, TidelineError, UnknownEmbedder
from tideline.memory import AGENT_MIGRATIONS, Memory, header, write_export
from tideline.profile import PROFILE_MIGRATIONS
from tideline.search import Analyser, Policy, VectorOptions, resolve_floor, window_setting
from tideline.store import (
    Namespace,
    Storage,
    is_postgres_url,
    open_database,
    open_postgres,
)

if TYPE_CHECKING:
    from tideline.consolidate import (
        Dream,
        DreamLimits,
        SessionLimits,
        SessionMemory,
        Sleep,
        SleepLimits,
    )
    from tideline.inject import InjectConfig, MemoryProvider
    from tideline.library import Library, SyncReport, Watcher
    from tideline.llm import LLM, ChatBackend, LLMClient, Sampler
    from tideline.profile import Profile

log = logging.getLogger(__name__)
T = TypeVar("T")


class opened(Generic[T]):  # lower case: used like `cached_property`, which it replaces here
    """A service of the app, built once on first use under the app's `db_lock`: drivers run
    calls in worker threads that may race to open one (two `Memory`s on one connection)."""

    def __init__(self, build: Callable[[Tideline], T]) -> None:
        self.build = build
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, app: None, owner: type) -> opened[T]: ...
    @overload
    def __get__(self, app: Tideline, owner: type) -> T: ...
    def __get__(self, app: Tideline | None, owner: type) -> opened[T] | T:
        if app is None:
            return self
        with app.db_lock:
            if self.name not in app.__dict__:  # the instance's value shadows this from now on
                app.__dict__[self.name] = self.build(app)
            found: T = app.__dict__[self.name]
            return found


def integrity_seconds(s: Settings) -> float | None:
    """How often memory.db is checked whole without being asked (`integrity_check_hours`;
    negative: never, only `tideline doctor` checks)."""
    return None if s.integrity_check_hours < 0 else s.integrity_check_hours * 3600


def library_policy(s: Settings) -> Policy:
    """How the library ranks: RRF where equal raw scores share a rank, so identical notes tie
    and the fresher wins; trigram only when BM25 finds nothing (cheaper on large collections);
    `-t` and `--clean` are words to find; k = `library_rrf_k` (20) with the lexical list trusted
    by the coverage² of its best hit, floor `library_lex_floor` (0: the fusion never falls below
    its best list on tldr, benchmarks.md); the query vector centred unless `search_centre` is
    off (`search/_centre.py`)."""
    return Policy(
        ties="competition",
        trigram="fallback",
        literal_dashes=True,
        rrf_k=s.library_rrf_k,
        weights=(1.0, s.library_vector_weight),
        centre=s.search_centre != "off",
        trust=True,
        trust_floor=s.library_lex_floor,
        kind="note",
    )


class LibraryOptions(TypedDict):
    """The keyword arguments of `Library` that settings decide: checked against its signature
    where `library_from` unpacks them."""

    policy: Policy
    keys: str
    catch_up: str
    recheck: float
    min_score: str | float
    busy_timeout_ms: int


def library_options(s: Settings) -> LibraryOptions:
    """How a `Library` built from these settings ranks and keeps fresh (`library_from`)."""
    return {
        "policy": library_policy(s),
        "keys": s.library_keys,
        "catch_up": s.library_catch_up,
        "recheck": s.library_recheck,
        "min_score": s.search_min_score,
        "busy_timeout_ms": s.busy_timeout_ms,
    }


def library_from(
    s: Settings, root: Path | str, embedder: Embedder | None = None, **given: Any
) -> Library:
    """The library at `root` as the settings `s` make it, but for the options `given` (tests and
    benchmarks pass `DEFAULTS`: the constructor has no default of its own for a setting)."""
    from tideline.library import Library

    return Library(root, embedder, **{**library_options(s), **given})


def narrative_policy(s: Settings) -> Policy:
    """Narrative search: cosine + a boost for a verbatim keyword hit (`keyword_boost`), so an
    exact hit beats semantic neighbours."""
    return Policy(
        fusion="weighted",
        boost=s.keyword_boost,
        stop_words=s.search_stop_words,
        centre=s.search_centre == "all",
        kind="narrative",
        window=window_setting(s.search_time_window),
    )


def turn_policy(s: Settings) -> Policy:
    """Raw-turn search, chosen on LoCoMo dev (docs/benchmarks.md): fusion by score (α = 0.5 of
    BM25/best + 0.5 of min–max cosine) keeps a strong lexical hit ahead of near-equal neighbours,
    which RRF (k = 10 before issue 12: recall@5 0.546) flattened; `turn_fusion`, `turn_alpha`, and
    `turn_rrf_k` / `turn_vector_weight` for RRF set it. The levers (`memory/_turn_keys.py`):
    dates and memory keys, `turn_date_weight`, `turn_memory_weight`, `turn_answer_weight`,
    `turn_own_weight`, `turn_neighbour_weight`, `turn_reply_weight`, `turn_number_weight`,
    `turn_session_weight`, `turn_session_cap`. A question in another script than the turns
    ("Как зовут собак Джеймса?") rests on the vector list, centred, and names its speaker in
    Cyrillic too (`Policy.scripts`; translated LoCoMo questions, docs/benchmarks.md)."""
    return Policy(
        fusion=cast(Literal["rrf", "convex"], s.turn_fusion),  # one of its `choices`
        rrf_k=s.turn_rrf_k,
        weights=(1.0, s.turn_vector_weight),
        stop_words=s.search_stop_words,
        alpha=s.turn_alpha,
        centre=s.search_centre == "all",
        kind="turn",
        scripts=True,
        date_weight=s.turn_date_weight,
        memory_weight=s.turn_memory_weight,
        speaker_weight=s.turn_speaker_weight,
        answer_weight=s.turn_answer_weight,
        own_weight=s.turn_own_weight,
        neighbour_weight=s.turn_neighbour_weight,
        reply_weight=s.turn_reply_weight,
        number_weight=s.turn_number_weight,
        session_weight=s.turn_session_weight,
        session_cap=s.turn_session_cap,
        truncate=s.search_truncate,
        window=window_setting(s.search_time_window),
    )


class MemoryPolicies(TypedDict):
    """`Memory`'s search policies, which settings decide."""

    narrative_policy: Policy
    turn_policy: Policy


def memory_policies(s: Settings) -> MemoryPolicies:
    """How a `Memory` built from these settings ranks narratives and turns: pass as
    `Memory(db, embedder, **memory_policies(settings), ...)` (tests and benchmarks pass
    `DEFAULTS`: the constructor has no default of its own for them)."""
    return {"narrative_policy": narrative_policy(s), "turn_policy": turn_policy(s)}


def embedder_from(s: Settings, *, cache: bool = True) -> Embedder:
    """The embedder named by `embedder` (a built-in or a plugin's), in the persistent cache."""
    factories = embedder_factories()
    if s.embedder not in factories:
        raise UnknownEmbedder(
            f"unknown embedder {s.embedder!r}; set TIDELINE_EMBEDDER to one of {sorted(factories)}"
        )
    inner: Embedder = factories[s.embedder](s)
    if not cache or inner.model_id == "none":
        return inner
    return CachedEmbedder(inner, s.cache_path)


def inject_config(s: Settings) -> InjectConfig:
    """The injection tiers' sizes, thresholds and budgets: each field `<name>` of `InjectConfig`
    is the setting `inject_<name>`, each tier's budget `inject_budget_<tier>` (what the tiers
    retrieve is cut by the relevance floor of every search, `search_min_score`, which the memory
    holds)."""
    from tideline.inject import TIERS, InjectConfig, edge_kinds

    return section(
        InjectConfig,
        s,
        "inject_",
        soul_path=s.soul_path,
        agent_name=s.agent_name,
        graph_edges=edge_kinds(s.inject_graph_edges),
        budgets={t: getattr(s, f"inject_budget_{t.lower()}") for t in TIERS},
    )


def section(cls: Callable[..., T], s: Settings, prefix: str, **given: Any) -> T:
    """A service's section of the settings: the dataclass `cls` with each field `<name>` the
    setting `<prefix><name>`, but for those `given` (mapped by name: no field is copied by hand,
    and a field with no setting fails here)."""
    named = {
        f.name: getattr(s, prefix + f.name) for f in fields(cast(Any, cls)) if f.name not in given
    }
    return cls(**named, **given)


def session_limits(s: Settings) -> SessionLimits:
    """How much of a session its context holds (`session_<name>`)."""
    from tideline.consolidate import SessionLimits

    return section(SessionLimits, s, "session_")


def sleep_limits(s: Settings) -> SleepLimits:
    """What one Sleep may spend (`llm_<name>`)."""
    from tideline.consolidate import SleepLimits

    return section(SleepLimits, s, "llm_")


def dream_limits(s: Settings) -> DreamLimits:
    """What one dream may spend and how far it reaches (`dream_<name>`; its calls and the input
    of one call are the LLM's, `llm_run_max_calls` and `llm_max_input_tokens`)."""
    from tideline.consolidate import DreamLimits

    return section(
        DreamLimits,
        s,
        "dream_",
        run_max_calls=s.llm_run_max_calls,
        max_input_tokens=s.llm_max_input_tokens,
    )


def vector_options(s: Settings) -> VectorOptions:
    """How memory's indexes find vector candidates at scale."""
    return VectorOptions(file_min=s.vector_index_min, ef_search=s.vector_ef_search)


class Tideline:
    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, clock: Clock = system_clock
    ):
        self.settings = settings
        # The one clock every service reads "now" from (a `ManualClock` replays history).
        self.clock = clock
        plugins.configure(settings.plugins, settings.trace_plugins)
        # One connection, possibly many threads (MCP workers): the services on it (`Memory`,
        # `Profile`, the provider) take turns through this, and the app opens them under it.
        self.db_lock = threading.RLock()
        if embedder is not None:
            self.__dict__["embedder"] = embedder

    def for_namespace(
        self, agent: str, user: str | None = None, memo_root: Path | None = None
    ) -> Tideline:
        """Another namespace of the same server (`Settings.for_namespace`: its own database and
        library, or none), with this app's embedder (the same model, loaded once) and clock."""
        settings = self.settings.for_namespace(agent, user, memo_root)
        return Tideline(settings, self.embedder, self.clock)

    @opened
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
            return embedder_from(self.settings)
        except TidelineError as exc:
            log.warning("no embedder, search is lexical only: %s", exc)
            return None

    @cached_property
    def llm(self) -> LLMClient | None:
        """The configured OpenAI-compatible endpoint's client — one per app, for its sleep, dream
        and session memory — or None: runs then skip, saying `NO_LLM`."""
        from tideline.http import Retries
        from tideline.llm import OpenAIChat

        s = self.settings
        if not s.llm_base_url:
            return None
        retries = Retries(s.llm_max_retries, s.llm_backoff, s.llm_backoff_max)
        chat = OpenAIChat(s.llm_base_url, s.llm_model, s.llm_api_key, timeout=s.llm_timeout,
                          retries=retries, structured=s.llm_structured)  # fmt: skip
        return self._llm_client(chat)

    def llm_for(self, sampler: Sampler | None) -> LLMClient | None:
        """The LLM of a run an MCP client started: the configured endpoint wins (the one the user
        chose and pays for), else the client's own model through `sampler` (None: the connection
        cannot be asked), with the same caps; else None."""
        from tideline.llm import SamplingChat

        if self.llm is not None or sampler is None:
            return self.llm
        return self._llm_client(SamplingChat(sampler))

    def _llm_client(self, backend: ChatBackend) -> LLMClient:
        from tideline.llm import LLMClient

        s = self.settings
        return LLMClient(
            backend,
            max_input_tokens=s.llm_max_input_tokens,
            max_output_tokens=s.llm_max_output_tokens,
        )

    @opened
    def memory(self) -> Memory:
        s = self.settings
        return Memory(
            self.db,
            self.embedder,
            # the settings tune memory's policies (docs/configuration.md, docs/search.md)
            **memory_policies(s),
            # memory's searches (turns, memories, facts) take the turns' floor, chosen on
            # questions with and without an answer (bench/floor_unanswerable.py)
            min_score=resolve_floor(
                s.search_min_score, self.embedder.model_id if self.embedder else None, "turn"
            ),
            lock=self.db_lock,
            analyser=cast(Analyser, s.search_analyser),  # one of its `choices`
            turn_context=s.turn_context,
            vectors=vector_options(s),
            clock=self.clock,
            # a time question's window, with the calendar's events ("before the trip")
            time_window=lambda question, today: self.profile.time_window(question, today),
            keep_facts=lambda found: self.profile.import_facts(found),
            restore_profile=lambda records: self.profile.restore(records),
        )

    @opened
    def profile(self) -> Profile:
        from tideline.profile import Profile, Rules

        s = self.settings
        rules = Rules(
            established_sessions=s.profile_established_sessions,
            established_days=s.profile_established_days,
            strategy_days=s.profile_strategy_days,
        )
        return Profile(self.db, self.memory, clock=self.clock, lock=self.db_lock, rules=rules)

    @opened
    def library(self) -> Library:
        """The markdown library at `memo_root`; its own databases live under the root."""
        root = self.settings.memo_root
        if root is None or not str(root):
            raise InvalidInput(
                f"{self.settings.agent_name} has no library root: pass --root PATH or set "
                "MEMO_ROOT (memo_root in config.toml); a namespace of a shared server gets its "
                "own from 'library' in its tokens file entry (docs/web.md)"
            )
        return library_from(self.settings, root, self.embedder)

    def watcher(
        self,
        *,
        debounce: float,
        reconcile_every: float,
        on_sync: Callable[[list[SyncReport]], None] | None = None,
    ) -> Watcher:
        """A watcher of the library's root: hand edits indexed after `debounce` seconds of
        quiet, everything stat-scanned every `reconcile_every` seconds."""
        from tideline.library import Watcher

        return Watcher(
            self.library, debounce=debounce, reconcile_every=reconcile_every, on_sync=on_sync
        )

    @opened
    def provider(self) -> MemoryProvider:
        """The injection hooks (T0–T4) over this memory, its profile, session memory and
        dreaming."""
        from tideline.inject import MemoryProvider

        return MemoryProvider(
            self.memory,
            inject_config(self.settings),
            profile=self.profile,
            session_memory=self.session_memory,
            dream=self.dream,  # the self-concept with its grounds (T0), open threads (T3)
        )

    @opened
    def session_memory(self) -> SessionMemory:
        """The running summary and recall of each session (T1s), folded by the app's LLM."""
        from tideline.consolidate import SessionMemory

        return SessionMemory(self.memory, self.llm, session_limits(self.settings))

    @opened
    def sleep(self) -> Sleep:
        """The Sleep pipeline over the profile and memory, with the configured LLM."""
        return self.sleep_using(self.llm)

    def sleep_using(
        self,
        llm: LLM | None,
        no_llm: str | None = None,
        *,
        run_budget: int | None = None,
        run_max_calls: int | None = None,
    ) -> Sleep:
        """The Sleep pipeline with another LLM (the MCP client's model, through sampling), or
        none and why (`no_llm`, by default `NO_LLM`); the input cap stays the configured one, the
        budget and the call cap too unless given (a dream's sleep gets what is left of the
        dream's)."""
        from tideline.consolidate import Sleep
        from tideline.llm import NO_LLM

        limits = sleep_limits(self.settings)
        if run_budget is not None:
            limits = replace(limits, run_budget=run_budget)
        if run_max_calls is not None:
            limits = replace(limits, run_max_calls=run_max_calls)
        with self.db_lock:  # built like the services `opened` builds: workers may race
            return Sleep(
                self.profile,
                self.memory,
                llm,
                limits,
                embedder=self.embedder,
                no_llm=NO_LLM if no_llm is None else no_llm,
            )

    def export(self, out: TextIO, fmt: str = "jsonl") -> dict[str, int]:
        """Everything this agent remembers — sessions, turns, narratives, the profile — as a
        Tideline export (JSONL, which `tideline import` restores, or markdown to read).
        Returns how many records of each type were written."""
        from tideline import __version__  # here: importlib.metadata costs ~0.1 s to import

        body = [*self.memory.export_records(), *self.profile.dump()]
        schema = {
            m.name: max(m.applied(self.db), default=0)
            for m in (AGENT_MIGRATIONS, ANALYSIS_MIGRATIONS, PROFILE_MIGRATIONS)
        }
        manifest = header(
            self.settings.agent_name,
            now_text(self.clock),
            body,
            software=f"tideline {__version__}",
            schema=schema,
        )
        return write_export(chain([manifest], body), out, fmt)

    @opened
    def dream(self) -> Dream:
        """The DREAM pipeline (solidify → sleep → scripts → comb → drift → dream), its
        threads and self-concept, with the configured LLM."""
        return self.dream_using(self.llm)

    def dream_using(self, llm: LLM | None, no_llm: str | None = None) -> Dream:
        """The DREAM pipeline with another LLM (the MCP client's model, through sampling), or
        none and why (`no_llm`, by default `NO_LLM`); the budget and limits stay the
        configured ones."""
        from tideline.consolidate import Dream
        from tideline.llm import NO_LLM

        def sleep(run_budget: int, run_max_calls: int) -> Sleep:
            return self.sleep_using(llm, no_llm, run_budget=run_budget, run_max_calls=run_max_calls)

        with self.db_lock:  # built like the services `opened` builds: workers may race
            return Dream(
                self.profile,
                self.memory,
                llm,
                dream_limits(self.settings),
                sleep=sleep,
                embedder=self.embedder,
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
