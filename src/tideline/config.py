"""Settings: one declarative list, read from env vars and a TOML config file.

Precedence: explicit overrides > environment > config file > default. The config file is
`TIDELINE_CONFIG` if set, else `<home>/config.toml`; its keys are the setting names
(`embedder = "openai"`). Entry points (CLI, MCP server) call `Settings.load()` once and pass the
result down; core code never reads the environment itself.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from tideline.errors import ConfigError


@dataclass(frozen=True)
class Setting:
    """One setting: its name, env var, default, the help shown in docs and `doctor`, and what values
    it takes (`choices`, `bounds`: checked when the settings are loaded, the one place).

    `keep_empty`: an empty env value means "empty" (e.g. no plugins), not "unset".
    `secret`: the generated docs show no default (a value never belongs in a document).
    """

    name: str
    env: str
    default: Any
    help: str
    keep_empty: bool = False
    secret: bool = False
    choices: tuple[str, ...] = ()
    bounds: tuple[float, float] | None = None

    def check(self, value: Any) -> Any:
        """`value` if this setting allows it; else the one-line error that says what would do."""
        if self.choices and value not in self.choices:
            allowed = ", ".join(self.choices[:-1]) + f" or {self.choices[-1]}"
            raise ConfigError(
                f"setting {self.name}={value!r} is unknown; {self.env} must be {allowed}"
            )
        if self.bounds is not None and not self.bounds[0] <= value <= self.bounds[1]:
            low, high = (f"{b:g}" for b in self.bounds)
            raise ConfigError(
                f"setting {self.name}={value!r} is out of range; {self.env} must be from {low} "
                f"to {high}"
            )
        return value


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "agent_name", "AGENT_NAME", "agent", "Name of the agent; names its home and its tools."
    ),
    Setting("home", "TIDELINE_HOME", "", "Agent home folder (default ~/.tideline/<agent_name>)."),
    Setting(
        "embedder", "TIDELINE_EMBEDDER", "e5", "Embedding backend: e5, openai, none or a plugin."
    ),
    Setting("embed_url", "TIDELINE_EMBED_URL", "", "Base URL of an OpenAI-compatible API (…/v1)."),
    Setting("embed_model", "TIDELINE_EMBED_MODEL", "", "Model name sent to the embeddings API."),
    Setting("embed_api_key", "TIDELINE_EMBED_API_KEY", "", "API key for the embeddings API."),
    Setting("embed_batch", "TIDELINE_EMBED_BATCH", 32, "Texts per embedding request or batch."),
    Setting(
        "embed_timeout", "TIDELINE_EMBED_TIMEOUT", 30.0, "Seconds before an embedding call fails."
    ),
    Setting("embed_retries", "TIDELINE_EMBED_RETRIES", 2, "Retries of a failed embedding request."),
    Setting(
        "cache_path",
        "TIDELINE_EMBED_CACHE",
        "",
        "Embedding cache file (default ~/.tideline/embed-cache.db, shared by the agents there; "
        "<home>/embed-cache.db for a home elsewhere).",
    ),
    Setting(
        "busy_timeout_ms", "TIDELINE_BUSY_TIMEOUT_MS", 5000, "How long a write waits for a lock."
    ),
    Setting(
        "integrity_check_hours",
        "TIDELINE_INTEGRITY_CHECK_HOURS",
        24.0,
        "How often memory.db is checked whole (quick_check) without being asked: at the first "
        "open after that long, and by a running server; 0 at every open, -1 never.",
    ),
    Setting("memo_root", "MEMO_ROOT", "", "Root folder of the markdown library."),
    Setting(
        "library_rrf_k",
        "TIDELINE_LIBRARY_RRF_K",
        20,
        "Library search: the k of reciprocal rank fusion over BM25 and vector ranks.",
    ),
    # -- library search, issue 12 (docs/library.md, tuned on tldr: docs/benchmarks.md) --------
    Setting(
        "library_keys",
        "MEMO_KEYS",
        "items",
        "Library: `items` gives each list item (with its code block) of a note its own search key "
        "under the note's chunk; `off` indexes whole chunks only. Changing it rebuilds indexes.",
        choices=("items", "off"),
    ),
    Setting(
        "library_catch_up",
        "MEMO_CATCH_UP",
        "auto",
        "Library search: `auto` trusts a running `memo watch` instead of stat-ing the notes "
        "before each search; `stat` never trusts a watcher (see library_recheck).",
        choices=("auto", "stat"),
    ),
    Setting(
        "library_recheck",
        "MEMO_RECHECK",
        1.0,
        "Library search without a watcher: seconds a stat pass over every note of a collection "
        "vouches for it while its folders are unchanged (a note added, removed, renamed or saved "
        "by replacing it is seen at once; an edit in place within this long); 0 stats every note "
        "before every search.",
        bounds=(0.0, 3600.0),
    ),
    Setting(
        "library_vector_weight",
        "MEMO_VECTOR_WEIGHT",
        1.0,
        "Library search: weight of the vector list against the lexical list (1.0) in the fusion.",
    ),
    Setting(
        "library_lex_floor",
        "MEMO_LEX_FLOOR",
        0.0,
        "Library search: the lexical list's weight is floor + (1 - floor) x the square of the "
        "share of the query's content words its best hit contains; 1.0 turns this trust off.",
        bounds=(0.0, 1.0),
    ),
    Setting(
        "keyword_boost",
        "TIDELINE_KEYWORD_BOOST",
        0.3,
        "Memory search: added to a narrative's cosine when it contains every typed term verbatim.",
    ),
    Setting(
        "turn_rrf_k",
        "TIDELINE_TURN_RRF_K",
        10,
        "Raw-turn search: the k of reciprocal rank fusion (tuned on LoCoMo, docs/benchmarks.md).",
    ),
    Setting(
        "turn_vector_weight",
        "TIDELINE_TURN_VECTOR_WEIGHT",
        1.0,
        "Raw-turn search: weight of the vector list against the lexical list (1.0) in the fusion.",
    ),
    # -- retrieval quality (issue 12, docs/search.md) -------------------------------------------
    Setting(
        "search_analyser",
        "TIDELINE_SEARCH_ANALYSER",
        "snowball",
        "Lexical analyser of memory indexes: snowball (stems en/ru, jieba words) or plain.",
        choices=("snowball", "plain"),
    ),
    Setting(
        "search_stop_words",
        "TIDELINE_SEARCH_STOP_WORDS",
        True,
        "Memory search: drop a query's stop and question words from the lexical list.",
    ),
    Setting(
        "search_centre",
        "TIDELINE_SEARCH_CENTRE",
        "library",
        "Where search ranks by the query vector less the mean query vector of its language "
        "(bundled e5 only; docs/search.md): library, all (memory too) or off.",
        choices=("library", "all", "off"),
    ),
    Setting(
        "turn_context",
        "TIDELINE_TURN_CONTEXT",
        2,
        "Raw-turn search: neighbouring turns on each side that join a turn's lexical key (0: off).",
    ),
    Setting(
        "turn_fusion",
        "TIDELINE_TURN_FUSION",
        "convex",
        "Raw-turn search: rrf (by rank) or convex (by score, see turn_alpha).",
        choices=("rrf", "convex"),
    ),
    Setting(
        "turn_alpha",
        "TIDELINE_TURN_ALPHA",
        0.5,
        "Raw-turn search, convex fusion: the lexical share of the score.",
    ),
    Setting(
        "turn_date_weight",
        "TIDELINE_TURN_DATE_WEIGHT",
        1.0,
        "Raw-turn search: weight of the turns said at a time the question names (0: off).",
    ),
    Setting(
        "turn_memory_weight",
        "TIDELINE_TURN_MEMORY_WEIGHT",
        0.25,
        "Raw-turn search: weight of the source turns of matching narratives (0: off).",
    ),
    Setting(
        "turn_speaker_weight",
        "TIDELINE_TURN_SPEAKER_WEIGHT",
        0.25,
        "Raw-turn search: lift of the turns of a speaker the question names, a share of their "
        "own score (0: off).",
    ),
    Setting(
        "turn_answer_weight",
        "TIDELINE_TURN_ANSWER_WEIGHT",
        0.25,
        'Raw-turn search: a question turn found ("What\'s their name?") passes this share of its '
        "score to the next turn of its session by another speaker, the reply (0: off).",
    ),
    Setting(
        "turn_own_weight",
        "TIDELINE_TURN_OWN_WEIGHT",
        0.5,
        "Raw-turn search: lift of the first turns whose own words (not only their neighbours') "
        "hold the query's, a share of the best score × the share of the query's weight they "
        "hold (0: off).",
    ),
    Setting(
        "turn_neighbour_weight",
        "TIDELINE_TURN_NEIGHBOUR_WEIGHT",
        2.0,
        "Raw-turn search: lift of the first turns whose previous or next turn is near the "
        "query (their stored vectors), a share of the best score × how much nearer than the "
        "least near (0: off).",
    ),
    Setting(
        "turn_reply_weight",
        "TIDELINE_TURN_REPLY_WEIGHT",
        0.4,
        "Raw-turn search: a turn among the first found that the other speaker asked about passes "
        "a quarter of this share of its relevance, and the question this share of its own, to "
        "its speaker's reply (0: off).",
    ),
    Setting(
        "turn_number_weight",
        "TIDELINE_TURN_NUMBER_WEIGHT",
        0.5,
        "Raw-turn search: a question asking when, how long, how many or how much lifts the first "
        "turns that say a time or a number by this share of the best relevance (0: off).",
    ),
    Setting(
        "search_time_window",
        "TIDELINE_SEARCH_TIME_WINDOW",
        "1",
        'Memory search: a question that names a time ("last May", "before the trip": the '
        "calendar's events) lifts the turns and memories of that time by this weight, 0–4; "
        "`restrict` keeps only them (any time when none is relevant); off: 0.",
    ),
    Setting(
        "turn_session_cap",
        "TIDELINE_TURN_SESSION_CAP",
        0,
        "Raw-turn search: most turns of one session before other sessions (0: off).",
    ),
    # -- vectors at scale (issue 25, docs/memory.md "Vectors at scale", docs/postgresql.md) ----
    Setting(
        "vector_index_min",
        "TIDELINE_VECTOR_INDEX_MIN",
        50_000,
        "SQLite: vectors from which a memory index is searched through its vector file "
        "(`memory.db.vectors/`, HNSW, memory-mapped); fewer are searched exactly in memory.",
        bounds=(0, 10**12),
    ),
    Setting(
        "vector_ef_search",
        "TIDELINE_VECTOR_EF_SEARCH",
        0,
        "The HNSW walk of a vector search (the vector file; PostgreSQL's hnsw.ef_search): wider "
        "finds more of the true nearest and costs more. 0: chosen per query from k and the filter "
        "(SQLite: and the vector file's size).",
        bounds=(0, 1000),
    ),
    Setting(
        "turn_session_weight",
        "TIDELINE_TURN_SESSION_WEIGHT",
        0.0,
        "Raw-turn search: weight of the session-level list (a session as near as its best turns; "
        "0: off).",
    ),
    Setting(
        "search_truncate",
        "TIDELINE_SEARCH_TRUNCATE",
        0.0,
        "Search: score-adaptive truncation, the share of the best hit's relevance below which "
        "results stop (0: off).",
    ),
    Setting(
        "search_min_score",
        "TIDELINE_SEARCH_MIN_SCORE",
        "auto",
        "Search (memory and library): the relevance floor, 0–1; a result less likely relevant is "
        "left out and an empty answer means nothing relevant. `auto`: the calibrated floor of "
        "the embedder (docs/search.md); 0: off.",
    ),
    Setting(
        "plugins",
        "TIDELINE_PLUGINS",
        "*",
        "Plugin entry points to load: `*` all, a comma-separated allow-list, or empty for none.",
        keep_empty=True,
    ),
    Setting(
        "trace_plugins",
        "TIDELINE_TRACE_PLUGINS",
        False,
        "Log every plugin hook call on stderr.",
    ),
    Setting(
        "token",
        "TIDELINE_TOKEN",
        "",
        "Bearer token HTTP clients of `tideline serve` must send; required off loopback.",
        secret=True,
    ),
    # -- injection (T0–T4, docs/inject.md) ------------------------------------------------------
    Setting(
        "soul_file", "TIDELINE_SOUL", "", "Identity file read into T0 (default <home>/SOUL.md)."
    ),
    Setting(
        "inject_t0_soul",
        "TIDELINE_INJECT_T0_SOUL",
        True,
        "T0: show SOUL.md's text; off where the agent runtime puts it in the system prompt "
        "itself (the Hermes provider turns it off: Hermes shows its own SOUL.md).",
    ),
    Setting(
        "inject_t0_reflections",
        "TIDELINE_INJECT_T0_REFLECTIONS",
        5,
        "T0: how many reflections (the self-concept) to show, newest first.",
    ),
    Setting(
        "inject_t1_recent_turns",
        "TIDELINE_INJECT_T1_RECENT_TURNS",
        6,
        "T1: how many last turns of the current (or last) session to show.",
    ),
    Setting(
        "inject_t1_k", "TIDELINE_INJECT_T1_K", 5, "T1: most memories retrieved for the message."
    ),
    Setting(
        "inject_t4_trigger",
        "TIDELINE_INJECT_T4_TRIGGER",
        2,
        "T4 (hybrid search) runs when T1 retrieved fewer memories than this.",
    ),
    Setting("inject_t4_k", "TIDELINE_INJECT_T4_K", 5, "T4: most results of the hybrid search."),
    Setting(
        "inject_t4_fusion",
        "TIDELINE_INJECT_T4_FUSION",
        "rrf",
        "T4: how narratives fuse their two lists, rrf or weighted (turns keep the turn fusion).",
        choices=("rrf", "weighted"),
    ),
    Setting(
        "inject_t2_min_weight",
        "TIDELINE_INJECT_T2_MIN_WEIGHT",
        0.6,
        "T2: only memories heavier than this enter the prefetch pool.",
        bounds=(0.0, 1.0),
    ),
    Setting("inject_t2_k", "TIDELINE_INJECT_T2_K", 3, "T2: how many pool memories to show."),
    Setting(
        "inject_t3_clusters",
        "TIDELINE_INJECT_T3_CLUSTERS",
        25,
        "T3: how many topic clusters the memory map lists, largest first.",
    ),
    Setting(
        "inject_item_tokens",
        "TIDELINE_INJECT_ITEM_TOKENS",
        300,
        "Longest single item (memory, turn, SOUL.md excepted) before it is cut.",
    ),
    Setting("inject_budget_t0", "TIDELINE_INJECT_BUDGET_T0", 3000, "T0 token budget."),
    Setting("inject_budget_t1", "TIDELINE_INJECT_BUDGET_T1", 1500, "T1 token budget."),
    Setting("inject_budget_t2", "TIDELINE_INJECT_BUDGET_T2", 1500, "T2 token budget."),
    Setting("inject_budget_t2b", "TIDELINE_INJECT_BUDGET_T2B", 3000, "T2b token budget."),
    Setting("inject_budget_t3", "TIDELINE_INJECT_BUDGET_T3", 1500, "T3 token budget."),
    Setting("inject_budget_t4", "TIDELINE_INJECT_BUDGET_T4", 1500, "T4 token budget."),
    # -- injection from the profile and session memory (docs/inject.md) ------------------------
    Setting(
        "inject_t0_snapshot_tokens",
        "TIDELINE_INJECT_T0_SNAPSHOT_TOKENS",
        1200,
        "T0: most tokens of the profile snapshot (it shares the T0 budget with SOUL.md).",
    ),
    Setting(
        "inject_t3_facts",
        "TIDELINE_INJECT_T3_FACTS",
        30,
        "T3: most profile facts listed, heaviest first (facts near expiry weigh less).",
    ),
    Setting(
        "inject_facts_k",
        "TIDELINE_INJECT_FACTS_K",
        3,
        "T1p: most profile facts matched by the message.",
    ),
    Setting(
        "inject_min_score",
        "TIDELINE_INJECT_MIN_SCORE",
        0.13,
        "T1/T1p/T1q: the relevance a memory, fact or question needs to be put into the context "
        "unasked (the same score search shows; search itself answers from search_min_score).",
        bounds=(0.0, 1.0),
    ),
    Setting(
        "inject_graph_edges",
        "TIDELINE_INJECT_GRAPH_EDGES",
        "causes,related_to,supports",
        "T1p: edge kinds followed from a matched fact to pull in related facts.",
    ),
    Setting(
        "inject_graph_k",
        "TIDELINE_INJECT_GRAPH_K",
        4,
        "T1p: most facts pulled in along those edges.",
    ),
    Setting(
        "inject_strategies_k",
        "TIDELINE_INJECT_STRATEGIES_K",
        1,
        "T1q: open questions (clarify/probe/verify) offered per turn, 0–2; each is offered once.",
    ),
    Setting("inject_budget_t1s", "TIDELINE_INJECT_BUDGET_T1S", 800, "T1s token budget."),
    Setting("inject_budget_t1p", "TIDELINE_INJECT_BUDGET_T1P", 500, "T1p token budget."),
    Setting("inject_budget_t1q", "TIDELINE_INJECT_BUDGET_T1Q", 150, "T1q token budget."),
    # -- LLM client (docs/llm.md) ---------------------------------------------------------------
    Setting(
        "llm_base_url",
        "TIDELINE_LLM_BASE_URL",
        "",
        "Base URL of an OpenAI-compatible chat API (…/v1); empty: the LLM steps are skipped.",
    ),
    Setting("llm_api_key", "TIDELINE_LLM_API_KEY", "", "API key for the chat API."),
    Setting("llm_model", "TIDELINE_LLM_MODEL", "", "Model name sent to the chat API."),
    Setting("llm_timeout", "TIDELINE_LLM_TIMEOUT", 120.0, "Seconds one chat request may take."),
    Setting(
        "llm_max_retries",
        "TIDELINE_LLM_MAX_RETRIES",
        4,
        "Retries of a chat request answered 429/5xx or cut by a connection error.",
    ),
    Setting(
        "llm_backoff",
        "TIDELINE_LLM_BACKOFF",
        1.0,
        "Seconds before the first retry; doubles on each retry up to `llm_backoff_max`.",
    ),
    Setting(
        "llm_backoff_max",
        "TIDELINE_LLM_BACKOFF_MAX",
        30.0,
        "Longest wait before a retry, Retry-After included; a call waits at most retries × this.",
    ),
    Setting(
        "llm_structured",
        "TIDELINE_LLM_STRUCTURED",
        "auto",
        "Structured output: auto (json_schema, else json_object with a schema, else JSON mode, "
        "else prompt only; learnt per endpoint), json_schema, json_object_schema, json_object or "
        "prompt.",
        choices=("auto", "json_schema", "json_object_schema", "json_object", "prompt"),
    ),
    Setting(
        "llm_max_input_tokens",
        "TIDELINE_LLM_MAX_INPUT_TOKENS",
        24000,
        "Largest prompt (estimated tokens) one call may send; a larger one is refused.",
    ),
    Setting(
        "llm_max_output_tokens",
        "TIDELINE_LLM_MAX_OUTPUT_TOKENS",
        2000,
        "Most tokens one answer may have, unless a step asks for fewer.",
    ),
    # -- session memory (docs/sleep.md; the seed's numbers) ------------------------------------
    Setting(
        "session_char_budget",
        "TIDELINE_SESSION_CHAR_BUDGET",
        3000,
        "Session memory: characters of summary + recalled + recent turns together.",
    ),
    Setting(
        "session_keep_recent",
        "TIDELINE_SESSION_KEEP_RECENT",
        5,
        "Session memory: the last turns always kept in full.",
    ),
    Setting(
        "session_summary_ratio",
        "TIDELINE_SESSION_SUMMARY_RATIO",
        0.4,
        "Session memory: the share of the budget the sliding summary may take.",
    ),
    Setting(
        "session_recall_max",
        "TIDELINE_SESSION_RECALL_MAX",
        3,
        "Session memory: most earlier turns recalled by similarity to the message.",
    ),
    Setting(
        "llm_run_budget",
        "TIDELINE_LLM_RUN_BUDGET",
        0,
        "Tokens (prompt + answer) one pipeline run may spend; 0: no limit.",
    ),
    Setting(
        "llm_run_max_calls",
        "TIDELINE_LLM_RUN_MAX_CALLS",
        300,
        "LLM requests one sleep or dream run may make (repairs included); new sessions are "
        "taken in only under half of it; 0: no limit.",
    ),
    # -- Hermes Agent (docs/hermes.md) ----------------------------------------------------------
    Setting(
        "hermes_home",
        "HERMES_HOME",
        "",
        "Hermes Agent's home, where `tideline hermes install` writes the plugin (default "
        "~/.hermes; Hermes's own variable).",
    ),
    # -- sleep triggers (docs/sleep.md) ---------------------------------------------------------
    Setting(
        "sleep_on_exit",
        "TIDELINE_SLEEP_ON_EXIT",
        False,
        "Start a sleep when a stdio MCP client disconnects (the agent session ended).",
    ),
    Setting(
        "sleep_on_exit_timeout",
        "TIDELINE_SLEEP_ON_EXIT_TIMEOUT",
        900.0,
        "Seconds that sleep may take; past it the run stops at a step boundary, nothing applied.",
    ),
    # the DREAM layers (docs/dream.md)
    Setting(
        "dream_run_budget",
        "TIDELINE_DREAM_RUN_BUDGET",
        40000,
        "Tokens one dream run may spend, its Sleep included; 0: no limit.",
    ),
    Setting(
        "dream_comb_memories",
        "TIDELINE_DREAM_COMB_MEMORIES",
        40,
        "Combing: most memories the model reads (the day's first, then the heaviest).",
    ),
    Setting(
        "dream_drift_hops",
        "TIDELINE_DREAM_DRIFT_HOPS",
        3,
        "Night drift: most steps of the walk away from the seed memory.",
    ),
    Setting(
        "profile_established_sessions",
        "TIDELINE_PROFILE_ESTABLISHED_SESSIONS",
        3,
        "Established: a confirmed fact backed by at least this many sessions (see the days).",
    ),
    Setting(
        "profile_established_days",
        "TIDELINE_PROFILE_ESTABLISHED_DAYS",
        90.0,
        "Established: ... whose words span at least this many days of the user's time.",
    ),
    Setting(
        "profile_strategy_days",
        "TIDELINE_PROFILE_STRATEGY_DAYS",
        90.0,
        "A question Sleep left (clarify, probe, verify) expires unanswered after these days.",
    ),
    Setting(
        "inject_t3_threads",
        "TIDELINE_INJECT_T3_THREADS",
        10,
        "T3: most open threads of dreaming listed, last touched first.",
    ),
    Setting(
        "database_url",
        "TIDELINE_DATABASE_URL",
        "",
        "postgresql://… puts the agent database in PostgreSQL (empty: <home>/memory.db).",
        secret=True,
    ),
    Setting(
        "database_user",
        "TIDELINE_DATABASE_USER",
        "",
        "PostgreSQL only: the user whose memories these are (a namespace under the agent).",
    ),
    Setting(
        "tokens_file",
        "TIDELINE_TOKENS_FILE",
        "",
        "TOML file giving each bearer token its namespace (agent, optional user): one "
        "`tideline serve --transport http` then answers for several agents (docs/web.md).",
    ),
    Setting(
        "panel_session_hours",
        "TIDELINE_PANEL_SESSION_HOURS",
        12.0,
        "Hours a panel login lasts; every login also ends when the server stops (docs/web.md).",
    ),
)

_BY_NAME = {s.name: s for s in SETTINGS}
T = TypeVar("T")
#: Settings that are gone, and what took their place (a config file that still names one says so).
RETIRED = {
    "inject_t1_min_similarity": "injection's memories are cut by the relevance floor "
    "search_min_score, like every search",
    "inject_facts_min_similarity": "injection's facts are cut by the relevance floor "
    "search_min_score, like every search",
    "session_recall_min_score": "session memory's recall is cut by the relevance floor "
    "search_min_score, like every search",
}


def _unknown(names: set[str], source: str, noun: str) -> ConfigError:
    """Unknown setting names in `source`, saying what replaced a retired one."""
    retired = sorted(names & set(RETIRED))
    if retired:
        why = "; ".join(f"{n} is retired: {RETIRED[n]}" for n in retired)
        return ConfigError(f"{source}: {why}; remove it")
    return ConfigError(f"{source} has unknown {noun} {sorted(names)}; known: {sorted(_BY_NAME)}")


def _cache_path(merged: Mapping[str, Any], home: Path) -> Path:
    """`cache_path`, else beside the agents' homes under ~/.tideline (one cache for all of
    them), else — a home set elsewhere with `home` — inside that home: TIDELINE_HOME=/x/fresh
    never writes into /x."""
    if merged.get("cache_path"):
        return Path(str(merged["cache_path"])).expanduser()
    shared = Path("~/.tideline").expanduser()
    return shared / "embed-cache.db" if home.parent == shared else home / "embed-cache.db"


def _home(value: Any, agent: str) -> Path:
    if value:
        return Path(str(value)).expanduser()
    return Path("~/.tideline").expanduser() / agent


def _read_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML ({exc}); fix or remove it"
        ) from exc
    unknown = set(data) - set(_BY_NAME)
    if unknown:
        raise _unknown(unknown, f"config file {path}", "key(s)")
    return data


FALSE = frozenset({"0", "false", "no", "off", ""})
TRUE = frozenset({"1", "true", "yes", "on"})


def _coerce(setting: Setting, value: Any) -> Any:
    kind = type(setting.default)
    if kind is str or value is None:
        return value if value is None else str(value)
    if kind is bool:
        return _boolean(setting, value)
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"setting {setting.name} ({setting.env}) must be {kind.__name__}, got {value!r}"
        ) from None


def _boolean(setting: Setting, value: Any) -> bool:
    """`bool("0")` is True; a setting's "0", "false", "no" and "off" are False."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE | FALSE:
        return text in TRUE
    raise ConfigError(
        f"setting {setting.name} ({setting.env}) must be true or false (1/0, yes/no, on/off), "
        f"got {value!r}"
    )


def _resolve(merged: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting's value: the one in `merged` (else its default) converted and checked; the
    paths made from theirs (`home`, `cache_path`, `memo_root`)."""
    values = {s.name: s.check(_coerce(s, merged.get(s.name, s.default))) for s in SETTINGS}
    values["agent_name"] = values["agent_name"] or "agent"
    values["home"] = _home(values["home"], values["agent_name"])
    values["cache_path"] = _cache_path(merged, values["home"])
    values["memo_root"] = Path(values["memo_root"]).expanduser() if values["memo_root"] else None
    return values


def _defaults_from_settings(cls: type[T]) -> type[T]:
    """Give each field its `Setting`'s default (resolved as `Settings.load` would, without env or
    config file): the defaults are written once, in `SETTINGS`."""
    for name, value in _resolve({}).items():
        setattr(cls, name, value)
    return cls


@dataclass(frozen=True)
@_defaults_from_settings
class Settings:
    """Resolved settings. Build with `Settings.load()`; tests pass `env=` and `overrides=`.

    Only the names and types are written here: each default is its `Setting`'s in `SETTINGS`
    (`Settings()` holds them all; tests/test_config.py checks that the two agree)."""

    agent_name: str
    home: Path
    embedder: str
    embed_url: str
    embed_model: str
    embed_api_key: str
    embed_batch: int
    embed_timeout: float
    embed_retries: int
    cache_path: Path
    busy_timeout_ms: int
    integrity_check_hours: float
    memo_root: Path | None
    library_rrf_k: int
    library_keys: str
    library_catch_up: str
    library_recheck: float
    library_vector_weight: float
    library_lex_floor: float
    keyword_boost: float
    turn_rrf_k: int
    turn_vector_weight: float
    search_analyser: str
    search_stop_words: bool
    search_centre: str
    turn_context: int
    turn_fusion: str
    turn_alpha: float
    turn_date_weight: float
    turn_memory_weight: float
    turn_speaker_weight: float
    turn_answer_weight: float
    turn_own_weight: float
    turn_neighbour_weight: float
    turn_reply_weight: float
    turn_number_weight: float
    search_time_window: str
    turn_session_cap: int
    turn_session_weight: float
    search_truncate: float
    vector_index_min: int
    vector_ef_search: int
    search_min_score: str
    plugins: str
    trace_plugins: bool
    token: str
    soul_file: str
    inject_t0_soul: bool
    inject_t0_reflections: int
    inject_t1_recent_turns: int
    inject_t1_k: int
    inject_t4_trigger: int
    inject_t4_k: int
    inject_t4_fusion: str
    inject_t2_min_weight: float
    inject_t2_k: int
    inject_t3_clusters: int
    inject_item_tokens: int
    inject_budget_t0: int
    inject_budget_t1: int
    inject_budget_t2: int
    inject_budget_t2b: int
    inject_budget_t3: int
    inject_budget_t4: int
    inject_t0_snapshot_tokens: int
    inject_t3_facts: int
    inject_facts_k: int
    inject_min_score: float
    inject_graph_edges: str
    inject_graph_k: int
    inject_strategies_k: int
    inject_budget_t1s: int
    inject_budget_t1p: int
    inject_budget_t1q: int
    llm_base_url: str
    llm_api_key: str
    llm_model: str
    llm_timeout: float
    llm_max_retries: int
    llm_backoff: float
    llm_backoff_max: float
    llm_structured: str
    llm_max_input_tokens: int
    llm_max_output_tokens: int
    session_char_budget: int
    session_keep_recent: int
    session_summary_ratio: float
    session_recall_max: int
    llm_run_budget: int
    llm_run_max_calls: int
    hermes_home: str
    sleep_on_exit: bool
    sleep_on_exit_timeout: float
    dream_run_budget: int
    dream_comb_memories: int
    dream_drift_hops: int
    profile_established_sessions: int
    profile_established_days: float
    profile_strategy_days: float
    inject_t3_threads: int
    database_url: str
    database_user: str
    tokens_file: str
    panel_session_hours: float

    @property
    def db_path(self) -> Path:
        """The agent's memory database."""
        return self.home / "memory.db"

    def for_namespace(
        self, agent: str, user: str | None = None, memo_root: Path | None = None
    ) -> Settings:
        """These settings for another namespace of the same server: on PostgreSQL its schema;
        on SQLite the agent's own home beside this one (`<home>/../<agent>`, a user's under
        `users/<user>` in it), so each namespace is a database file of its own. What one
        namespace reads is its own: its library is `memo_root` (None: it has no library, never
        the server's) and its SOUL.md is the one in its home."""
        if (agent, user or "") == (self.agent_name, self.database_user):
            return self
        home = self.home.parent / agent
        if user and not self.database_url:
            home = home / "users" / user
        return replace(
            self,
            agent_name=agent,
            database_user=user or "",
            home=home,
            memo_root=memo_root,
            soul_file="",
        )

    @property
    def soul_path(self) -> Path:
        """The agent's identity file, read into T0 (`soul_file`, default `<home>/SOUL.md`)."""
        return Path(self.soul_file).expanduser() if self.soul_file else self.home / "SOUL.md"

    @classmethod
    def load(
        cls,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> Settings:
        """Resolve every setting from overrides, env, the config file and defaults."""
        env = os.environ if env is None else env
        overrides = dict(overrides or {})
        unknown = set(overrides) - set(_BY_NAME)
        if unknown:
            raise _unknown(unknown, "the overrides", "setting(s)")
        raw: dict[str, Any] = {}
        for s in SETTINGS:
            if s.env in env and (env[s.env] != "" or s.keep_empty):
                raw[s.name] = env[s.env]
        raw.update({k: v for k, v in overrides.items() if v is not None})
        agent = str(raw.get("agent_name") or "agent")
        home = _home(raw.get("home"), agent)
        file_values = _read_config_file(
            Path(env["TIDELINE_CONFIG"]) if env.get("TIDELINE_CONFIG") else home / "config.toml"
        )
        return cls(**_resolve({**file_values, **raw, "agent_name": agent}))


def child_environment(values: Mapping[str, Any]) -> dict[str, str]:
    """This process's environment with `values` (setting name -> value) under their variables: a
    child process (`tideline sleep`, started by a driver that loaded its settings with
    overrides) then resolves the same settings."""
    unknown = set(values) - set(_BY_NAME)
    if unknown:
        raise _unknown(unknown, "the child's settings", "setting(s)")
    env = dict(os.environ)
    for name, value in values.items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value or "")
        env[_BY_NAME[name].env] = text
    return env


DEFAULTS = Settings(**_resolve({}))
"""Every setting's default, for the core's own defaults (`InjectConfig`, the search policies): a
service built without settings behaves as one built from none."""
