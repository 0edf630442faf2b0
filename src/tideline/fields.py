"""The arguments of every command and tool, declared once for both drivers.

The CLI (`cli/_options.py`) and the MCP server and REST API (`serve/_fields.py`) build their
options and argument schemas from these specs, so a bound, a default or a set of choices cannot differ
between `tideline search -k` and `memory_search(k=…)`; `tests/test_fields.py` checks both
against them. Bounds come from the core's own constants where the core enforces one. Plain
dataclasses: the core layers below know nothing of typer or pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from tideline.consolidate.dream import LAYER_NAMES, THREAD_ACTIONS
from tideline.consolidate.dream import THREAD_STATUSES as THREAD_STATUS_NAMES
from tideline.library import MAX_K as LIBRARY_MAX_K
from tideline.library import MAX_READ_LINES
from tideline.memory import EXPORT_FORMATS, KINDS, MAX_K, MAX_WINDOW, SEARCH_TURNS
from tideline.profile import ACTIVE_STATUSES, STATUSES
from tideline.search import MODES
from tideline.store import MAX_ID


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of an argument the caller must give.
REQUIRED: Final[object] = _Required()
#: The default of a `many` field, nothing given: the CLI's `[]`, MCP's `null`.
NO_ITEMS: tuple[()] = ()


@dataclass(frozen=True)
class Field:
    """One argument: its name in the core and in MCP, its CLI spelling, type, default and rules."""

    name: str
    kind: type
    default: object = REQUIRED
    help: str = ""  # the --help text and the MCP description
    many: bool = False  # repeated CLI option / list in MCP
    ge: float | None = None
    le: float | None = None
    choices: tuple[str, ...] = ()
    flag: str | None = None  # the CLI spelling when it is not --<name-with-dashes>
    positional: bool = False  # a CLI argument rather than an option
    aliases: tuple[str, ...] = ()  # names models guess, renamed by the MCP server

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def option(self) -> str:
        """The CLI option, e.g. `--cognition-direction`."""
        return self.flag or "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Command:
    """A command and/or tool: `tool` is the MCP name, `cli` the command path ("memo search")."""

    tool: str | None
    cli: str | None
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.tool or self.cli} has no field {name!r}")

    @property
    def aliases(self) -> dict[str, str]:
        """alias -> argument, for the MCP server's renaming."""
        return {a: f.name for f in self.fields for a in f.aliases}


def id_field(name: str, default: object = REQUIRED, help: str = "", **more: Any) -> Field:
    """A record id (turn, memory, fact, thread, run), the one id type of every entry point:
    1 … `MAX_ID` (2^63 − 1, what SQLite and PostgreSQL store). The CLI, the MCP schemas and the
    REST API take these bounds from the spec, so an id of 2^63 is refused in one line there,
    never sent to SQL (#21: `OverflowError` from `fact_reject`, a 500 from `/facts/2^63`)."""
    return Field(name, int, default, help, ge=1, le=MAX_ID, **more)


_SINCE = ("after", "from", "start")
_UNTIL = ("before", "to", "end")
_K = ("limit", "top_k", "n", "max_results", "count")

SINCE = Field(
    "since", str, None, "Only results from this time on (ISO date or time).", aliases=_SINCE
)
UNTIL = Field(
    "until", str, None, "Only results before this time (ISO date or time).", aliases=_UNTIL
)
MODE = Field(
    "mode",
    str,
    "hybrid",
    "hybrid (default); lex for exact names, numbers and rare words; vec for paraphrases.",
    choices=MODES,
)
SESSION = Field(
    "session",
    str,
    None,
    "Conversation id as given to sync_turn (default: the latest session).",
    aliases=("session_id", "conversation", "conversation_id"),
)

IDEMPOTENCY_KEY = Field(
    "idempotency_key",
    str,
    None,
    "A string unique to this write (a UUID, say), sent again unchanged when retrying it: a "
    "retry after a lost answer returns the first answer (replayed=true) and stores nothing twice.",
    aliases=("request_id", "dedupe_key", "idempotency"),
)

SYNC_TURN = Command(
    "sync_turn",
    None,
    (
        replace(
            SESSION,
            default=REQUIRED,
            help="Conversation id, stable for the whole conversation (any string).",
            aliases=("session_id",),
        ),
        Field("role", str, help="Who spoke: 'user', 'assistant', 'system' or 'tool'."),
        Field(
            "text",
            str,
            help="The full text of the turn, unshortened.",
            aliases=("content", "message"),
        ),
        Field(
            "speaker",
            str,
            None,
            "Name of the speaker when it matters (e.g. the user's name).",
            aliases=("author",),
        ),
        Field(
            "timestamp",
            str,
            None,
            "When it was said, ISO 8601 (default: now).",
            aliases=("time", "ts", "created_at"),
        ),
        IDEMPOTENCY_KEY,
    ),
)

MEMORY_WRITE = Command(
    "memory_write",
    "write",
    (
        Field(
            "gesture",
            str,
            help="What happened or was learned, one or two sentences, with its tone.",
            positional=True,
            aliases=("content", "text", "memory", "summary"),
        ),
        Field("context", str, "", "Circumstances: when, where, who, what led to it."),
        Field(
            "cognition_direction", str, "", "What you think or will do about it; why it matters."
        ),
        Field("importance", int, 3, "1 trivial … 5 life-changing.", ge=1, le=5),
        Field("emotional", int, 3, "Emotional intensity, 1 flat … 5 intense.", ge=1, le=5),
        Field("unresolved", int, 1, "1 settled … 5 wide open, needs follow-up.", ge=1, le=5),
        Field(
            "tags",
            str,
            NO_ITEMS,
            "Short topic tags, e.g. work, health.",
            many=True,
            flag="--tag",
            aliases=("tag",),
        ),
        Field(
            "entities_role",
            str,
            "",
            "Who played which role, as 'Anna=manager+decider; Ben=helper'.",
        ),
        Field(
            "related_entities",
            str,
            NO_ITEMS,
            "Names of the people, places and things involved.",
            many=True,
            flag="--entity",
            aliases=("entities",),
        ),
        id_field(
            "source_links",
            NO_ITEMS,
            "Ids of the turns this memory comes from (from sync_turn).",
            many=True,
            flag="--link",
            aliases=("turn_ids", "sources", "source_turns", "turns"),
        ),
        Field(
            "kind",
            str,
            "narrative",
            "narrative (default), reflection or dream (imagined).",
            choices=KINDS,
        ),
        id_field(
            "supersedes",
            None,
            "Id of a memory this one corrects; the old one leaves search but stays traceable.",
            aliases=("replaces", "corrects"),
        ),
        IDEMPOTENCY_KEY,
    ),
)

#: The relevance floor of a search, memory or library (`tideline.search._score`).
MIN_SCORE = Field(
    "min_score",
    float,
    None,
    "Relevance floor, 0–1 (each result's score is its estimated probability of being relevant): "
    "leave out results below it; default the search_min_score setting, 0 shows everything.",
    ge=0,
    le=1,
    aliases=("threshold", "min_similarity", "min_relevance"),
)

MEMORY_SEARCH = Command(
    "memory_search",
    "search",
    (
        Field(
            "query",
            str,
            help="What to look for, in natural language or keywords.",
            positional=True,
            aliases=("q", "text", "search", "question", "query_text"),
        ),
        Field("k", int, 10, "How many results.", ge=1, le=MAX_K, flag="--k", aliases=_K),
        SINCE,
        UNTIL,
        Field("min_weight", float, None, "Only memories at least this weighty (0–1).", ge=0, le=1),
        Field(
            "tags",
            str,
            NO_ITEMS,
            "Only memories with one of these tags.",
            many=True,
            flag="--tag",
            aliases=("tag",),
        ),
        Field("kind", str, None, "Only this kind: narrative, reflection or dream.", choices=KINDS),
        Field(
            "include_turns",
            bool,
            SEARCH_TURNS,
            "Search the raw conversation turns beside the memories, in one list by relevance "
            "(off: memories only; a kind, tag or weight filter means memories only too).",
            flag="--turns",
            aliases=("include_raw", "with_turns", "turns"),
        ),
        MODE,
        MIN_SCORE,
        Field(
            "today",
            str,
            None,
            "The day a question's time words (last May) are read against (ISO date; default: "
            "the newest turn's).",
            aliases=("reference_date",),
        ),
    ),
)

MEMORY_TRACE = Command(
    "memory_trace",
    "trace",
    (
        id_field(
            "narrative_id",
            help="Memory id, from memory_search.",
            positional=True,
            aliases=("id", "memory_id", "narrative"),
        ),
        Field(
            "window",
            int,
            2,
            "Neighbouring turns on each side.",
            ge=0,
            le=MAX_WINDOW,
            aliases=("context", "neighbours", "neighbors"),
        ),
    ),
)

MEMORY_STATS = Command("memory_stats", "stats", ())

SESSIONS = Command(
    None,
    "sessions",
    (Field("limit", int, 50, "How many sessions, most recent first.", ge=1, le=1000),),
)

MEMORY_CONTEXT = Command(
    "memory_context",
    None,
    (
        Field(
            "message",
            str,
            None,
            "The user's current message; omit at the start of a conversation.",
            aliases=("query", "q", "text", "user_message", "content"),
        ),
        SESSION,
        Field(
            "include_identity",
            bool,
            False,
            "With a message, also return the identity block.",
            aliases=("identity", "with_identity"),
        ),
    ),
)

#: `tideline prefetch MESSAGE`: memory_context(message=…) from the shell.
PREFETCH = Command(
    None,
    "prefetch",
    (
        Field("message", str, help="The user's message to prefetch memory for.", positional=True),
        SESSION,
    ),
)

ATTENTION_HEATMAP = Command(
    "memory_attention_heatmap",
    "heatmap",
    (
        replace(SINCE, help="Window start, ISO date or time (default: all)."),
        replace(UNTIL, help="Window end, ISO date or time (default: now)."),
    ),
)

SCAN_UNINDEXED = Command(
    "memory_scan_unindexed",
    "scripts scan",
    (
        Field(
            "max_gap_minutes",
            float,
            30.0,
            "Minutes of silence that start a new chunk.",
            ge=0,
            le=10_080,
            flag="--gap",
            aliases=("gap", "gap_minutes", "max_gap"),
        ),
        Field(
            "after",
            str,
            None,
            "Only turns after this time (default: the latest memory's).",
            aliases=("since", "cutoff"),
        ),
        Field("max_chars", int, 500, "Shorten each turn to this length.", ge=20, le=100_000),
    ),
)

_QUERY = ("q", "text", "question")
_PATH = ("scope", "folder", "collection", "file")

MEMO_SEARCH = Command(
    "memo_search",
    "memo search",
    (
        Field("query", str, help="Words or a question.", positional=True, aliases=_QUERY),
        Field(
            "path",
            str,
            "*",
            "A collection folder (e.g. work/jira), a sub-folder or one file; '*' searches every "
            "collection.",
            aliases=_PATH,
        ),
        Field("k", int, 8, "How many results.", ge=1, le=LIBRARY_MAX_K, flag="--k", aliases=_K),
        MODE,
        MIN_SCORE,
    ),
)

MEMO_ROUTE = Command(
    "memo_route",
    "memo route",
    (
        Field(
            "query",
            str,
            help="A question; a word like work/ limits the name tree.",
            positional=True,
            aliases=_QUERY,
        ),
        Field(
            "k",
            int,
            10,
            "How many candidate collections.",
            ge=1,
            le=LIBRARY_MAX_K,
            flag="--k",
            aliases=("limit", "top_k"),
        ),
        Field("prefix", str, "", "Only collections under this name prefix (e.g. work/)."),
    ),
)

MEMO_STATUS = Command(
    "memo_status",
    "memo status",
    (
        Field(
            "path",
            str,
            None,
            "A collection or folder (default: everything).",
            positional=True,
            aliases=_PATH,
        ),
    ),
)

MEMO_REINDEX = Command(
    "memo_reindex",
    "memo reindex",
    (
        Field(
            "path",
            str,
            help="A collection, a folder or a file ('*' for all).",
            positional=True,
            aliases=_PATH,
        ),
        Field(
            "full",
            bool,
            False,
            "Throw the index away and rebuild it from the markdown (slow: every note is "
            "embedded again).",
        ),
    ),
)

# -- one note: memo_write / memo_read (everyday-ux) ---------------------------------------------
_NOTE = ("file", "note", "location")

MEMO_WRITE = Command(
    "memo_write",
    "memo write",
    (
        Field(
            "path",
            str,
            help="The note, relative to the library root, in a collection: e.g. work/jira/today.md.",
            positional=True,
            aliases=_NOTE,
        ),
        Field(
            "text",
            str,
            help="The markdown to write ('-' on the command line reads it from stdin).",
            positional=True,
            aliases=("content", "markdown", "body"),
        ),
        Field(
            "append",
            bool,
            False,
            "Add to the end of an existing note (created if missing); without it an existing "
            "note is never overwritten.",
        ),
        IDEMPOTENCY_KEY,
    ),
)

MEMO_READ = Command(
    "memo_read",
    "memo read",
    (
        Field(
            "path",
            str,
            help="The note, relative to the library root, or a search hit's path:line.",
            positional=True,
            aliases=_NOTE,
        ),
        Field("start", int, 1, "First line to read (1-based).", ge=1, aliases=("from_line",)),
        Field(
            "end",
            int,
            None,
            f"Last line to read (default: {MAX_READ_LINES} lines from start).",
            ge=1,
            aliases=("to_line",),
        ),
    ),
)

# -- everyday data: import, export, forget ----------------------------------------------------

IMPORT = Command(
    None,
    "import",
    (
        Field("path", str, help="The export file to import.", positional=True),
        Field(
            "format",
            str,
            "auto",
            "auto (recognise the file), chatgpt, claude, openai, transcript, locomo, "
            "mcp-memory, mem0, letta, tideline or a plugin's.",
            flag="--format",
        ),
        Field("session", str, None, "Put every turn into this session id."),
    ),
)

EXPORT = Command(
    None,
    "export",
    (
        Field(
            "format",
            str,
            "jsonl",
            "jsonl (a backup that `tideline import` restores) or markdown (to read).",
            choices=EXPORT_FORMATS,
            flag="--format",
        ),
        Field(
            "file",
            str,
            None,
            "Write to this file instead of standard output (the same as -o FILE).",
            positional=True,
        ),
        Field("output", str, "-", "Write to this file instead of standard output."),
    ),
)

MEMORY_FORGET = Command(
    "memory_forget",
    "forget",
    (
        Field(
            "query",
            str,
            None,
            "Forget every turn and memory containing all these words (3+ letters each).",
            positional=True,
            aliases=("q", "text", "matching"),
        ),
        id_field(
            "turns",
            NO_ITEMS,
            "Ids of conversation turns to forget.",
            many=True,
            flag="--turn",
            aliases=("turn_ids", "turn_id", "turn"),
        ),
        Field(
            "session",
            str,
            None,
            "A whole conversation to forget, by its session id.",
            aliases=("session_id", "conversation", "conversation_id"),
        ),
        id_field(
            "narratives",
            NO_ITEMS,
            "Ids of memories to forget.",
            many=True,
            flag="--narrative",
            aliases=("narrative_ids", "narrative_id", "memory_ids", "memory_id", "ids", "id"),
        ),
        Field(
            "why",
            str,
            None,
            "The reason, kept on the tombstone with the time.",
            aliases=("reason",),
        ),
        Field(
            "confirm",
            bool,
            False,
            "Erase now; without it nothing changes and the list of what would go is returned.",
            flag="--yes",
            aliases=("yes", "confirmed", "execute"),
        ),
    ),
)

# -- the profile and Sleep (docs/profile.md, docs/sleep.md) ----------------------------------
#: `status` of `tideline profile` / `memory_profile`: one lifecycle status, or these two groups.
LIVE, ALL = "live", "all"


def fact_statuses(status: str) -> tuple[str, ...] | None:
    """The statuses `Profile.facts` takes for a `status` argument (None: every status)."""
    if status == ALL:
        return None
    return ACTIVE_STATUSES if status == LIVE else (status,)


FACT_ID = id_field(
    "fact_id",
    help="Fact id, from memory_profile (`tideline profile`).",
    positional=True,
    aliases=("id", "fact"),
)

SLEEP_RUN = Command(
    "sleep_run",
    "sleep",
    (
        Field(
            "dry_run",
            bool,
            False,
            "Compute everything (LLM calls included) and show the plan; apply nothing.",
            aliases=("plan", "dry"),
        ),
        Field(
            "timeout",
            float,
            0.0,
            "Seconds the run may take, checked at each step boundary (past it the run stops, "
            "nothing applied); 0: no limit.",
            ge=0,
            le=86_400,
        ),
    ),
)

MEMORY_PROFILE = Command(
    "memory_profile",
    "profile",
    (
        Field(
            "status",
            str,
            LIVE,
            "live (suspected, confirmed, established; default), all, or one status.",
            choices=(LIVE, ALL, *STATUSES),
        ),
        Field("category", str, None, "Only this category (e.g. city, job)."),
        Field(
            "subject",
            str,
            None,
            "Only facts about this subject: user, self, or a person's name.",
            aliases=("about", "person"),
        ),
        Field(
            "as_of",
            str,
            None,
            "The profile as it stood on this date in the user's own time (ISO date or time, e.g."
            " 2023-06-15; a date means its end): the facts believed then, with their status and"
            " evidence then, and the events and people of that time.",
            aliases=("at", "on", "date", "as_at"),
        ),
    ),
)

FACT_REJECT = Command(
    "fact_reject",
    "fact reject",
    (
        FACT_ID,
        Field(
            "why",
            str,
            help="Why the fact is wrong (kept on its timeline).",
            aliases=("reason", "because"),
        ),
    ),
)

FACT_CLOSE = Command(
    "fact_close",
    "fact close",
    (
        FACT_ID,
        Field(
            "why",
            str,
            None,
            "Why it no longer holds (default: closed by hand).",
            aliases=("reason", "because"),
        ),
        id_field(
            "successor",
            None,
            "The live fact that replaced it (its id): the fact then ends when that one began, "
            "and the two share one timeline, as an arbitration would leave them.",
            aliases=("successor_id", "replaced_by", "superseded_by"),
        ),
    ),
)

FACT_TIMELINE = Command("fact_timeline", "fact show", (FACT_ID,))

RUNS = Command(
    None,
    "runs",
    (Field("limit", int, 20, "How many runs, most recent first.", ge=1, le=1000),),
)

MIGRATE = Command(
    None,
    "migrate",
    (
        Field(
            "to",
            str,
            help="Where to copy the agent database: postgresql://… (into the agent's namespace)"
            " or an SQLite file path (back from PostgreSQL).",
        ),
        Field(
            "source",
            str,
            None,
            "What to copy: an SQLite file (default <home>/memory.db) or, with a path --to,"
            " a postgresql:// URL (default TIDELINE_DATABASE_URL).",
            flag="--from",
        ),
    ),
)

# -- the DREAM layers (docs/dream.md) --------------------------------------------------------
DREAM_RUN = Command(
    "dream_run",
    "dream",
    (
        Field(
            "date",
            str,
            None,
            "The day to dream, YYYY-MM-DD (UTC; default: today).",
            aliases=("day",),
        ),
        Field(
            "layers",
            str,
            NO_ITEMS,
            f"Only these layers (default: all), run in pipeline order: {', '.join(LAYER_NAMES)}.",
            many=True,
            aliases=("layer", "steps"),
        ),
        replace(
            SLEEP_RUN.field("dry_run"),
            help="Compute every layer (LLM calls included) and report; write and record nothing.",
        ),
    ),
)

#: `status` of a thread listing: one status, or every thread.
THREAD_STATUSES = (*THREAD_STATUS_NAMES, ALL)

MEMORY_THREADS = Command(
    "memory_threads",
    "threads",
    (
        Field(
            "action",
            str,
            "list",
            "list (default); open a thread; touch one (a note, more memories); close one.",
            choices=THREAD_ACTIONS,
            positional=True,
        ),
        Field(
            "status",
            str,
            None,
            "list: which threads (open by default; resolved, dropped, all). close: how it "
            "ended, resolved (default) or dropped.",
            choices=THREAD_STATUSES,
        ),
        id_field(
            "thread_id",
            None,
            "The thread to touch or close, from the listing.",
            flag="--id",
            aliases=("id", "thread"),
        ),
        Field("title", str, None, "open: the direction or question, in a line."),
        Field(
            "why",
            str,
            None,
            "open: why it matters; close: why it is settled.",
            aliases=("reason", "because"),
        ),
        Field("note", str, None, "touch: what moved it.", aliases=("text",)),
        id_field(
            "memories",
            NO_ITEMS,
            "open: the memories that raised it (at least one); touch: memories that moved it.",
            many=True,
            flag="--memory",
            aliases=("memory_ids", "narratives", "narrative_ids", "raised_by"),
        ),
        Field("limit", int, 50, "list: how many, most recently touched first.", ge=1, le=1000),
    ),
)

DREAM_RUNS = Command(
    None,
    "dream-runs",
    (Field("limit", int, 20, "How many dream runs, most recent first.", ge=1, le=1000),),
)

COMMANDS: tuple[Command, ...] = (
    SYNC_TURN,
    MEMORY_WRITE,
    MEMORY_SEARCH,
    MEMORY_TRACE,
    MEMORY_STATS,
    SESSIONS,
    MEMORY_CONTEXT,
    PREFETCH,
    ATTENTION_HEATMAP,
    SCAN_UNINDEXED,
    MEMO_SEARCH,
    MEMO_ROUTE,
    MEMO_STATUS,
    MEMO_REINDEX,
    SLEEP_RUN,
    MEMORY_PROFILE,
    FACT_REJECT,
    FACT_CLOSE,
    FACT_TIMELINE,
    RUNS,
    IMPORT,
    EXPORT,
    MEMORY_FORGET,
    MEMO_WRITE,
    MEMO_READ,
    DREAM_RUN,
    MEMORY_THREADS,
    DREAM_RUNS,
    MIGRATE,
)
